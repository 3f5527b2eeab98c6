// Writing torch.save files (protocol-2 pickle in a PyTorchStreamWriter zip), and the PyValue
// helpers. What is written loads with `torch.load` (also with weights_only=True: only
// OrderedDict, _rebuild_tensor_v2 and <dtype>Storage globals appear).

#include <caffe2/serialize/inline_container.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "interop/torch_archive.h"
#include "lengen/engine/errors.h"

namespace lengen::engine::interop {

namespace {
PyValuePtr make(PyValue::Kind kind)
{
    auto p = std::make_shared<PyValue>();
    p->kind = kind;
    return p;
}
}  // namespace

PyValuePtr PyValue::none() { return make(Kind::None); }
PyValuePtr PyValue::of(bool v)
{
    auto p = make(Kind::Bool);
    p->boolean = v;
    return p;
}
PyValuePtr PyValue::of(std::int64_t v)
{
    auto p = make(Kind::Int);
    p->integer = v;
    return p;
}
PyValuePtr PyValue::of(double v)
{
    auto p = make(Kind::Float);
    p->number = v;
    return p;
}
PyValuePtr PyValue::of(std::string v)
{
    auto p = make(Kind::Str);
    p->text = std::move(v);
    return p;
}
PyValuePtr PyValue::of(torch::Tensor v)
{
    auto p = make(Kind::Tensor);
    p->tensor = std::move(v);
    return p;
}
PyValuePtr PyValue::tuple(std::vector<PyValuePtr> v)
{
    auto p = make(Kind::Tuple);
    p->items = std::move(v);
    return p;
}
PyValuePtr PyValue::list(std::vector<PyValuePtr> v)
{
    auto p = make(Kind::List);
    p->items = std::move(v);
    return p;
}
PyValuePtr PyValue::makeDict() { return make(Kind::Dict); }

PyValuePtr PyValue::get(const std::string& key) const
{
    if (kind != Kind::Dict)
        return nullptr;
    for (const auto& [k, v] : dict)
        if (k->kind == Kind::Str && k->text == key)
            return v;
    return nullptr;
}

void PyValue::set(PyValuePtr key, PyValuePtr value)
{
    for (auto& [k, v] : dict)
        if (k->kind == key->kind && k->text == key->text && k->integer == key->integer &&
            (k->kind == Kind::Str || k->kind == Kind::Int)) {
            v = std::move(value);
            return;
        }
    dict.emplace_back(std::move(key), std::move(value));
}

std::string PyValue::kindName() const
{
    switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return ordered ? "OrderedDict" : "dict";
    case Kind::Tensor: return "tensor";
    case Kind::Global: return "global '" + text + "'";
    }
    return "?";
}

namespace {

const char* storageName(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return "FloatStorage";
    case at::kDouble: return "DoubleStorage";
    case at::kHalf: return "HalfStorage";
    case at::kBFloat16: return "BFloat16Storage";
    case at::kLong: return "LongStorage";
    case at::kInt: return "IntStorage";
    case at::kByte: return "ByteStorage";
    case at::kBool: return "BoolStorage";
    default:
        throw Error(ErrorKind::Internal,
                    "cannot write tensors of type " + std::string(c10::toString(t)));
    }
}

class Pickler {
public:
    std::string out;
    std::vector<torch::Tensor> storages;  // record data/<index>

    void value(const PyValue& v)
    {
        using K = PyValue::Kind;
        switch (v.kind) {
        case K::None: op('N'); break;
        case K::Bool: op(v.boolean ? '\x88' : '\x89'); break;
        case K::Int: integer(v.integer); break;
        case K::Float: {
            op('G');
            std::uint64_t bits;
            std::memcpy(&bits, &v.number, 8);
            for (int i = 7; i >= 0; --i)
                out += static_cast<char>((bits >> (8 * i)) & 0xff);
            break;
        }
        case K::Str: str(v.text); break;
        case K::Tuple:
            op('(');
            for (const auto& i : v.items)
                value(*i);
            op('t');
            break;
        case K::List:
            op(']');
            op('(');
            for (const auto& i : v.items)
                value(*i);
            op('e');
            break;
        case K::Dict:
            if (v.ordered)
                orderedDict();
            else
                op('}');
            op('(');
            for (const auto& [k, x] : v.dict) {
                value(*k);
                value(*x);
            }
            op('u');
            break;
        case K::Tensor: tensor(v.tensor); break;
        case K::Global: throw Error(ErrorKind::Internal, "cannot write a Python global");
        }
    }

private:
    void op(char c) { out += c; }
    void le(std::uint64_t v, int n)
    {
        for (int i = 0; i < n; ++i)
            out += static_cast<char>((v >> (8 * i)) & 0xff);
    }
    void integer(std::int64_t v)
    {
        if (v >= INT32_MIN && v <= INT32_MAX) {
            op('J');
            le(static_cast<std::uint32_t>(v), 4);
        } else {
            op('\x8a');
            le(8, 1);
            le(static_cast<std::uint64_t>(v), 8);
        }
    }
    void str(const std::string& s)
    {
        op('X');
        le(s.size(), 4);
        out += s;
    }
    void global(const char* module, const char* name)
    {
        op('c');
        out += module;
        out += '\n';
        out += name;
        out += '\n';
    }
    void orderedDict()
    {
        global("collections", "OrderedDict");
        op(')');
        op('R');
    }
    void tensor(const torch::Tensor& t0)
    {
        const torch::Tensor t = t0.detach().to(torch::kCPU).contiguous();
        const std::string key = std::to_string(storages.size());
        storages.push_back(t);
        global("torch._utils", "_rebuild_tensor_v2");
        op('(');
        // persistent id: ('storage', torch.<Type>Storage, key, 'cpu', numel)
        op('(');
        str("storage");
        global("torch", storageName(t.scalar_type()));
        str(key);
        str("cpu");
        integer(t.numel());
        op('t');
        op('Q');
        integer(0);  // storage offset
        op('(');
        for (auto s : t.sizes())
            integer(s);
        op('t');
        op('(');
        for (auto s : t.strides())
            integer(s);
        op('t');
        op('\x89');     // requires_grad
        orderedDict();  // backward hooks
        op('t');
        op('R');
    }
};

}  // namespace

void writeTorchFile(const std::string& path, const PyValue& root)
{
    Pickler p;
    p.out = "\x80\x02";  // PROTO 2
    p.value(root);
    p.out += '.';
    const std::string partial = path + ".partial";
    try {
        std::ofstream file(partial, std::ios::binary | std::ios::trunc);
        if (!file)
            throw Error(ErrorKind::Io, "cannot create " + partial);
        {
            // The writer must never see a short write: it throws, and its destructor then
            // throws again (std::terminate). Failures are remembered and reported after it.
            bool failed = false;
            caffe2::serialize::PyTorchStreamWriter zip(
                [&file, &failed](const void* data, size_t n) -> size_t {
                    if (!failed) {
                        file.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
                        failed = !file;
                    }
                    return n;
                });
            for (size_t i = 0; i < p.storages.size() + 1 && !failed; ++i) {
                if (i == 0) {
                    zip.writeRecord("data.pkl", p.out.data(), p.out.size());
                    continue;
                }
                const auto& t = p.storages[i - 1];
                zip.writeRecord("data/" + std::to_string(i - 1), t.data_ptr(), t.nbytes());
            }
            zip.writeEndOfFile();
            file.flush();
            if (failed || !file)
                throw Error(ErrorKind::Io, "cannot write " + partial + ": " + std::strerror(errno) +
                                               " (disk full?)");
        }
        file.close();
        std::filesystem::rename(partial, path);
    } catch (const Error&) {
        std::remove(partial.c_str());
        throw;
    } catch (const std::exception& e) {
        std::remove(partial.c_str());
        throw Error(ErrorKind::Io, "cannot write " + path, e.what());
    }
}

}  // namespace lengen::engine::interop
