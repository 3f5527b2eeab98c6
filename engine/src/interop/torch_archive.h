#pragma once
// Reading and writing the files Python's `torch.save` makes (the zip format of PyTorch >= 1.6):
// a zip archive holding `data.pkl` (a protocol-2 pickle) and one record `data/<key>` per tensor
// storage. LibTorch's own `torch::pickle_load` cannot read a real state.pt (it lacks the SETITEM
// opcode and OrderedDict's BUILD), so the pickle part is ours: a small, bounds-checked
// interpreter of the opcodes `torch.save` emits, producing a tree of PyValue. The zip container
// is LibTorch's PyTorchStreamReader / PyTorchStreamWriter (public in 1.13 and in 2.x).
//
// Only plain data is accepted: dicts, OrderedDicts, lists, tuples, str, int, float, bool, None
// and tensors. Any other Python global is refused with a message naming it, so a foreign or
// malicious pickle can never run code (there is nothing here that could).

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lengen::engine::interop {

struct PyValue;
using PyValuePtr = std::shared_ptr<PyValue>;

/// One Python value of an unpickled torch.save file.
struct PyValue {
    enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Tensor, Global };
    Kind kind = Kind::None;
    bool boolean = false;
    std::int64_t integer = 0;
    double number = 0;
    std::string text;                                     ///< Str; Global: "module.name"
    std::vector<PyValuePtr> items;                        ///< Tuple, List
    std::vector<std::pair<PyValuePtr, PyValuePtr>> dict;  ///< Dict, in insertion order
    torch::Tensor tensor;                                 ///< CPU, contiguous
    bool ordered = false;                                 ///< Dict: a collections.OrderedDict

    static PyValuePtr none();
    static PyValuePtr of(bool v);
    static PyValuePtr of(std::int64_t v);
    static PyValuePtr of(double v);
    static PyValuePtr of(std::string v);
    static PyValuePtr of(torch::Tensor v);
    static PyValuePtr tuple(std::vector<PyValuePtr> v);
    static PyValuePtr list(std::vector<PyValuePtr> v);
    static PyValuePtr makeDict();

    /// Dict lookup by string key; nullptr when absent (or this is not a dict).
    PyValuePtr get(const std::string& key) const;
    void set(PyValuePtr key, PyValuePtr value);
    std::string kindName() const;
};

/// Reads a torch.save file. Throws Error(RunFile) naming `path` for a missing, truncated,
/// legacy-format or foreign file, or a pickle that is not plain data.
PyValuePtr readTorchFile(const std::string& path);

/// Writes `root` as torch.save would (protocol 2, zip format) to `path`, through a temporary
/// file renamed into place. Dicts whose `ordered` flag is set are written as OrderedDicts.
/// Throws Error(Io) when the file cannot be written.
void writeTorchFile(const std::string& path, const PyValue& root);

}  // namespace lengen::engine::interop
