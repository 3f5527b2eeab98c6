// Reading torch.save files: the zip container through LibTorch's PyTorchStreamReader, the
// pickle through a small interpreter of the opcodes torch.save emits (protocol 2; the few
// protocol 3-5 opcodes newer Pythons may use are accepted too). Every length, index and stack
// access is checked before use: a damaged file is an Error naming it, never a crash.
// LibTorch's zip reader is built without CRC checks, so every record's CRC-32 is compared
// with the zip's central directory here: a flipped byte in the weights is an error too.

#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "interop/torch_archive.h"
#include "interop/zip_crc.h"
#include "lengen/engine/errors.h"

namespace lengen::engine::interop {

namespace {

constexpr size_t kMaxDepth = 10000;    // stack entries (a state dict needs a few dozen)
constexpr size_t kMaxMemo = 10000000;  // memo slots

// A stack entry: a value (a Python global is a value of kind Global) or a MARK.
struct Slot {
    PyValuePtr value;
    bool mark = false;
};

PyValuePtr global(std::string name)
{
    auto v = std::make_shared<PyValue>();
    v->kind = PyValue::Kind::Global;
    v->text = std::move(name);
    return v;
}

at::ScalarType storageType(const std::string& global, const std::string& file)
{
    static const std::map<std::string, at::ScalarType> types = {
        {"torch.FloatStorage", at::kFloat}, {"torch.DoubleStorage", at::kDouble},
        {"torch.HalfStorage", at::kHalf},   {"torch.BFloat16Storage", at::kBFloat16},
        {"torch.LongStorage", at::kLong},   {"torch.IntStorage", at::kInt},
        {"torch.ShortStorage", at::kShort}, {"torch.CharStorage", at::kChar},
        {"torch.ByteStorage", at::kByte},   {"torch.BoolStorage", at::kBool}};
    const auto it = types.find(global);
    if (it == types.end())
        throw Error(ErrorKind::RunFile, file + ": unsupported tensor storage '" + global + "'");
    return it->second;
}

class Unpickler {
public:
    Unpickler(const char* data, size_t size, caffe2::serialize::PyTorchStreamReader& zip,
              std::string file, std::map<std::string, std::uint32_t> crcs)
        : m_p(data), m_end(data + size), m_zip(zip), m_file(std::move(file)),
          m_crcs(std::move(crcs))
    {}

    /// Error unless `record`'s bytes have the CRC-32 the central directory lists for it.
    void checkCrc(const std::string& record, const void* data, size_t size) const
    {
        const auto it = m_crcs.find(record);
        if (it == m_crcs.end())
            fail("record '" + record + "' is not in the zip's directory");
        if (crc32Of(data, size) != it->second)
            fail("record '" + record + "' fails its checksum");
    }

    PyValuePtr run();

private:
    // One opcode of its group: true when it was one of theirs.
    bool containerOp(unsigned char op);
    bool memoOp(unsigned char op);
    bool scalarOp(unsigned char op);
    bool objectOp(unsigned char op);
    [[noreturn]] void fail(const std::string& why) const
    {
        throw Error(ErrorKind::RunFile, m_file + ": damaged or foreign pickle (" + why + ")");
    }
    const char* take(size_t n)
    {
        if (static_cast<size_t>(m_end - m_p) < n)
            fail("ends in the middle of an instruction");
        const char* at = m_p;
        m_p += n;
        return at;
    }
    std::uint64_t le(size_t n)
    {
        const auto* b = reinterpret_cast<const unsigned char*>(take(n));
        std::uint64_t v = 0;
        for (size_t i = 0; i < n; ++i)
            v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
        return v;
    }
    std::string line()
    {
        const char* nl = static_cast<const char*>(std::memchr(m_p, '\n', m_end - m_p));
        if (!nl || nl - m_p > 256)
            fail("unterminated global name");
        std::string s(m_p, nl);
        m_p = nl + 1;
        return s;
    }
    void push(PyValuePtr v)
    {
        if (m_stack.size() >= kMaxDepth)
            fail("stack too deep");
        m_stack.push_back({std::move(v), false});
    }
    Slot pop()
    {
        if (m_stack.empty() || m_stack.back().mark)
            fail("stack underflow");
        Slot s = std::move(m_stack.back());
        m_stack.pop_back();
        return s;
    }
    PyValuePtr popValue() { return pop().value; }
    PyValuePtr& top()
    {
        if (m_stack.empty() || m_stack.back().mark || !m_stack.back().value)
            fail("stack underflow");
        return m_stack.back().value;
    }
    std::vector<PyValuePtr> popToMark()
    {
        std::vector<PyValuePtr> out;
        while (true) {
            if (m_stack.empty())
                fail("missing MARK");
            if (m_stack.back().mark) {
                m_stack.pop_back();
                break;
            }
            out.push_back(popValue());
        }
        return {out.rbegin(), out.rend()};
    }
    void memoPut(std::uint64_t index)
    {
        if (index > kMaxMemo)
            fail("memo index out of range");
        if (m_memo.size() <= index)
            m_memo.resize(index + 1);
        if (m_stack.empty() || m_stack.back().mark)
            fail("memo of an empty stack");
        m_memo[index] = m_stack.back();
    }
    void memoGet(std::uint64_t index)
    {
        if (index >= m_memo.size() || !m_memo[index].value)
            fail("memo index " + std::to_string(index) + " was never stored");
        if (m_stack.size() >= kMaxDepth)
            fail("stack too deep");
        m_stack.push_back(m_memo[index]);
    }
    void setItems(std::vector<PyValuePtr> kv)
    {
        if (kv.size() % 2)
            fail("odd number of dict items");
        PyValuePtr& d = top();
        if (d->kind != PyValue::Kind::Dict)
            fail("SETITEMS on a " + d->kindName());
        for (size_t i = 0; i < kv.size(); i += 2)
            d->set(kv[i], kv[i + 1]);
    }
    void appendItems(std::vector<PyValuePtr> items)
    {
        PyValuePtr& l = top();
        if (l->kind != PyValue::Kind::List)
            fail("APPEND on a " + l->kindName());
        for (auto& v : items)
            l->items.push_back(std::move(v));
    }
    PyValuePtr reduce(const std::string& callable, const PyValuePtr& args);
    PyValuePtr persistentLoad(const PyValuePtr& pid);
    PyValuePtr rebuildTensor(const std::vector<PyValuePtr>& a);

    const char* m_p;
    const char* m_end;
    caffe2::serialize::PyTorchStreamReader& m_zip;
    std::string m_file;
    std::vector<Slot> m_stack;
    std::vector<Slot> m_memo;
    std::map<std::string, torch::Tensor> m_storages;  // key -> 1-D tensor of its elements
    std::map<std::string, std::uint32_t> m_crcs;      // record -> CRC-32
};

PyValuePtr Unpickler::persistentLoad(const PyValuePtr& pid)
{
    // ('storage', <storage type global>, key, location, numel)
    if (pid->kind != PyValue::Kind::Tuple || pid->items.size() != 5 ||
        pid->items[0]->text != "storage" || pid->items[1]->kind != PyValue::Kind::Global ||
        pid->items[2]->kind != PyValue::Kind::Str || pid->items[4]->kind != PyValue::Kind::Int)
        fail("unexpected persistent id");
    const at::ScalarType type = storageType(pid->items[1]->text, m_file);
    const std::string key = pid->items[2]->text;
    const std::int64_t numel = pid->items[4]->integer;
    auto it = m_storages.find(key);
    if (it == m_storages.end()) {
        const std::string record = "data/" + key;
        if (!m_zip.hasRecord(record))
            fail("storage record '" + record + "' is missing");
        auto [data, bytes] = m_zip.getRecord(record);
        checkCrc(record, data.get(), bytes);
        const size_t elem = c10::elementSize(type);
        if (numel < 0 || bytes / elem < static_cast<size_t>(numel))
            fail("storage '" + key + "' holds " + std::to_string(bytes) + " bytes, fewer than " +
                 std::to_string(numel) + " elements");
        // The tensor borrows the record's buffer (no copy); the deleter keeps it alive.
        auto buffer = std::make_shared<at::DataPtr>(std::move(data));
        torch::Tensor t = numel == 0 ? torch::empty({0}, torch::TensorOptions().dtype(type))
                                     : torch::from_blob(
                                           buffer->get(), {numel}, [buffer](void*) {},
                                           torch::TensorOptions().dtype(type));
        it = m_storages.emplace(key, t).first;
    }
    auto v = std::make_shared<PyValue>();
    v->kind = PyValue::Kind::Tensor;  // a storage: a 1-D tensor with its key in `text`
    v->tensor = it->second;
    v->text = "storage:" + key;
    return v;
}

PyValuePtr Unpickler::rebuildTensor(const std::vector<PyValuePtr>& a)
{
    // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks[, meta])
    if (a.size() < 4 || a[0]->kind != PyValue::Kind::Tensor || a[0]->text.rfind("storage:", 0) ||
        a[1]->kind != PyValue::Kind::Int || a[2]->kind != PyValue::Kind::Tuple ||
        a[3]->kind != PyValue::Kind::Tuple || a[2]->items.size() != a[3]->items.size() ||
        a[2]->items.size() > 16)
        fail("malformed tensor");
    const torch::Tensor& storage = a[0]->tensor;
    std::vector<std::int64_t> size, stride;
    std::int64_t last = a[1]->integer;  // index of the last element addressed
    bool empty = false;
    for (size_t i = 0; i < a[2]->items.size(); ++i) {
        const auto& s = a[2]->items[i];
        const auto& st = a[3]->items[i];
        if (s->kind != PyValue::Kind::Int || st->kind != PyValue::Kind::Int || s->integer < 0 ||
            st->integer < 0 || s->integer > (std::int64_t{1} << 40) ||
            st->integer > (std::int64_t{1} << 40))
            fail("malformed tensor shape");
        size.push_back(s->integer);
        stride.push_back(st->integer);
        empty = empty || s->integer == 0;
        if (s->integer > 0)
            last += (s->integer - 1) * st->integer;
    }
    if (a[1]->integer < 0 || (!empty && last >= storage.numel()))
        fail("tensor reaches past its storage");
    // A view of its storage (copied only when strided): state dicts hold one storage per tensor.
    torch::Tensor t = empty ? torch::empty(size, storage.options())
                            : storage.as_strided(size, stride, a[1]->integer).contiguous();
    return PyValue::of(t);
}

PyValuePtr Unpickler::reduce(const std::string& callable, const PyValuePtr& args)
{
    if (args->kind != PyValue::Kind::Tuple)
        fail("REDUCE without an argument tuple");
    if (callable == "collections.OrderedDict") {
        auto d = PyValue::makeDict();
        d->ordered = true;
        return d;
    }
    if (callable == "torch._utils._rebuild_tensor_v2" || callable == "torch._utils._rebuild_tensor")
        return rebuildTensor(args->items);
    if (callable == "torch._utils._rebuild_parameter" ||
        callable == "torch._utils._rebuild_parameter_with_state") {
        if (args->items.empty() || args->items[0]->kind != PyValue::Kind::Tensor)
            fail("malformed parameter");
        return args->items[0];
    }
    // copyreg._reconstructor(cls, base, state) and friends: name the class, not the helper.
    std::string type = callable;
    if (!args->items.empty() && args->items[0]->kind == PyValue::Kind::Global)
        type = args->items[0]->text;
    throw Error(ErrorKind::RunFile, m_file + ": holds a Python object of type '" + type +
                                        "', not plain tensors and values");
}

// MARK, the empty containers and what fills them: tuples, lists, dicts.
bool Unpickler::containerOp(unsigned char op)
{
    switch (op) {
    case '(': m_stack.push_back({nullptr, true}); break;  // MARK
    case '}': push(PyValue::makeDict()); break;
    case ']': push(PyValue::list({})); break;
    case ')': push(PyValue::tuple({})); break;
    case 't': push(PyValue::tuple(popToMark())); break;
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1..3
        std::vector<PyValuePtr> v(op - 0x84);
        for (size_t i = v.size(); i-- > 0;)
            v[i] = popValue();
        push(PyValue::tuple(std::move(v)));
        break;
    }
    case 'l': push(PyValue::list(popToMark())); break;
    case 'd': {
        auto kv = popToMark();
        push(PyValue::makeDict());
        setItems(std::move(kv));
        break;
    }
    case 'a': {
        auto v = popValue();
        appendItems({v});
        break;
    }
    case 'e': appendItems(popToMark()); break;
    case 's': {
        auto v = popValue();
        auto k = popValue();
        setItems({k, v});
        break;
    }
    case 'u': setItems(popToMark()); break;
    default: return false;
    }
    return true;
}

// The memo: values put aside and fetched again by index.
bool Unpickler::memoOp(unsigned char op)
{
    switch (op) {
    case 'q': memoPut(le(1)); break;           // BINPUT
    case 'r': memoPut(le(4)); break;           // LONG_BINPUT
    case 0x94: memoPut(m_memo.size()); break;  // MEMOIZE
    case 'h': memoGet(le(1)); break;           // BINGET
    case 'j': memoGet(le(4)); break;           // LONG_BINGET
    default: return false;
    }
    return true;
}

// Numbers, booleans, None and strings.
bool Unpickler::scalarOp(unsigned char op)
{
    switch (op) {
    case 'K': push(PyValue::of(static_cast<std::int64_t>(le(1)))); break;
    case 'M': push(PyValue::of(static_cast<std::int64_t>(le(2)))); break;
    case 'J': push(PyValue::of(static_cast<std::int64_t>(static_cast<std::int32_t>(le(4))))); break;
    case 0x8a: {  // LONG1
        const size_t n = le(1);
        if (n > 8)
            fail("integer wider than 64 bits");
        std::uint64_t v = n ? le(n) : 0;
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1)
            v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
        push(PyValue::of(static_cast<std::int64_t>(v)));
        break;
    }
    case 'G': {  // BINFLOAT, big-endian
        const auto* b = reinterpret_cast<const unsigned char*>(take(8));
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i)
            bits = (bits << 8) | b[i];
        double d;
        std::memcpy(&d, &bits, 8);
        push(PyValue::of(d));
        break;
    }
    case 'N': push(PyValue::none()); break;
    case 0x88: push(PyValue::of(true)); break;
    case 0x89: push(PyValue::of(false)); break;
    case 'X':
    case 0x8c:
    case 0x8d:
    case 'T':
    case 'U':
    case 'B':
    case 'C': {
        const size_t width = (op == 0x8c || op == 'U' || op == 'C') ? 1 : op == 0x8d ? 8 : 4;
        const std::uint64_t n = le(width);
        if (n > static_cast<std::uint64_t>(m_end - m_p))
            fail("string longer than the file");
        const char* s = take(n);
        push(PyValue::of(std::string(s, n)));
        break;
    }
    default: return false;
    }
    return true;
}

// Globals, persistent ids (the tensors' storages), REDUCE/NEWOBJ and BUILD.
bool Unpickler::objectOp(unsigned char op)
{
    switch (op) {
    case 'c': {  // GLOBAL module\nname\n
        std::string module = line();
        std::string name = line();
        push(global(module + "." + name));
        break;
    }
    case 0x93: {  // STACK_GLOBAL
        auto name = popValue();
        auto module = popValue();
        if (module->kind != PyValue::Kind::Str || name->kind != PyValue::Kind::Str)
            fail("STACK_GLOBAL of non-strings");
        push(global(module->text + "." + name->text));
        break;
    }
    case 'Q': {  // BINPERSID
        auto pid = popValue();
        push(persistentLoad(pid));
        break;
    }
    case 'R':
    case 0x81: {  // REDUCE, NEWOBJ
        auto args = popValue();
        auto callable = popValue();
        if (callable->kind != PyValue::Kind::Global)
            fail("REDUCE of a non-callable " + callable->kindName());
        push(reduce(callable->text, args));
        break;
    }
    case 'b': {      // BUILD: object state, ignored
        popValue();  // (OrderedDict's _metadata, ...)
        top();
        break;
    }
    default: return false;
    }
    return true;
}

PyValuePtr Unpickler::run()
{
    while (true) {
        const auto op = static_cast<unsigned char>(*take(1));
        if (op == '.')  // STOP
            return popValue();
        if (op == 0x80) {  // PROTO
            take(1);
            continue;
        }
        if (op == 0x95) {  // FRAME
            take(8);
            continue;
        }
        if (containerOp(op) || memoOp(op) || scalarOp(op) || objectOp(op))
            continue;
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("unsupported pickle opcode ") + hex);
    }
}

}  // namespace

PyValuePtr readTorchFile(const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        throw Error(ErrorKind::RunFile, path + ": no such file");
    {
        std::ifstream in(path, std::ios::binary);
        char magic[2] = {0, 0};
        in.read(magic, 2);
        if (magic[0] != 'P' || magic[1] != 'K') {
            const bool legacy = static_cast<unsigned char>(magic[0]) == 0x80;
            throw Error(ErrorKind::RunFile,
                        path + (legacy ? ": written by torch.save's legacy (pre-1.6) format; "
                                         "re-save it with a current PyTorch"
                                       : ": not a torch.save file (no zip archive)"));
        }
    }
    try {
        caffe2::serialize::PyTorchStreamReader zip(path);
        if (!zip.hasRecord("data.pkl"))
            throw Error(ErrorKind::RunFile, path + ": zip archive without data.pkl "
                                                   "(not a torch.save file)");
        auto [data, size] = zip.getRecord("data.pkl");
        Unpickler u(static_cast<const char*>(data.get()), size, zip, path, zipRecordCrcs(path));
        u.checkCrc("data.pkl", data.get(), size);
        return u.run();
    } catch (const Error&) {
        throw;
    } catch (const c10::Error& e) {
        throw Error(ErrorKind::RunFile, path + ": damaged torch.save archive",
                    e.what_without_backtrace());
    } catch (const std::exception& e) {
        throw Error(ErrorKind::RunFile, path + ": damaged torch.save archive", e.what());
    }
}

}  // namespace lengen::engine::interop
