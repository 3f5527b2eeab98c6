"""Read-only access to LenGen's HDF5 files, every failure turned into RunFileError.

Each reader opens its file, reads what it was asked for and closes it again: a notebook never
holds a run open, so a training, `lengen note` or `lengen eval` is never blocked by it, and the
next read sees what was written meanwhile. Files open in SWMR mode (a run may be training);
nothing here ever opens a file for writing.

HDF5 1.10 trusts the object sizes of a global heap: one damaged byte there makes reading a
variable-length string copy past its buffer and kills the process (files written before
November 2026 and files written by h5py keep strings there). So before the first such string
of a file is read, every heap collection in it is walked as LenGen's own readers walk them
(engine/src/io/global_heap.cpp) and a file whose objects do not fit is refused.
"""

import os
import stat
import struct
import time

import h5py
import numpy as np

# When a set, every object and attribute read is added to it as (file name, object path,
# attribute or None): the tests check that the package reads every field the docs name.
READS = None

_STRING_LIMIT = 16 << 20  # a longer fixed-length string is a damaged type, not a value


class RunFileError(Exception):
    """A LenGen file that cannot be read: missing, not HDF5, foreign, newer or damaged.

    `path` is the file, `dataset` the object in it that is at fault (None when the file as a
    whole is), `why` the reason. The message names both, as the CLI's exit-3 messages do.
    """

    def __init__(self, path, dataset, why):
        self.path = str(path)
        self.dataset = dataset
        self.why = why
        where = "%s: " % self.path if dataset is None else "%s: '%s': " % (self.path, dataset)
        super().__init__(where + why)


def _record(file, obj, attr=None):
    if READS is not None:
        READS.add((os.path.basename(file), "/" + obj.strip("/"), attr))


# -- global heaps ---------------------------------------------------------------------------

_walked = {}  # path -> (size, mtime_ns) of the last walk that found every heap sound


def _heap_problem(data, at):
    """Why the collection at byte `at` of `data` is damaged, or None. Layout (1.10): "GCOL",
    version 1, 3 reserved bytes, 8-byte size; objects: 2-byte index, 2-byte reference count,
    4 reserved bytes, 8-byte size, data padded to 8 bytes; index 0 is the free space, whose size
    counts its own header."""
    if at + 16 > len(data):
        return None
    size = struct.unpack_from("<Q", data, at + 8)[0]
    # HDF5 makes collections of at least 4 KiB; other "GCOL" bytes are no heap HDF5 reads.
    if size < 4096 or size > len(data) - at:
        return None
    p = 16
    while size - p >= 16:
        index = struct.unpack_from("<H", data, at + p)[0]
        length = struct.unpack_from("<Q", data, at + p + 8)[0]
        need = 16 + (length + 7) // 8 * 8 if index > 0 else length
        if length > size or need == 0 or need > size - p:
            return "object %d at byte %d claims %d bytes" % (index, p, length)
        p += need
    return None


def check_global_heaps(path):
    """Raises RunFileError when a global heap collection of the file is damaged."""
    try:
        st = os.stat(path)
    except OSError:
        return
    stamp = (st.st_size, st.st_mtime_ns)
    if _walked.get(path) == stamp:
        return
    with open(path, "rb") as f:
        data = f.read()
    at = data.find(b"GCOL\x01")
    while at >= 0:
        why = _heap_problem(data, at)
        if why:
            raise RunFileError(path, None, "the global heap at byte %d is damaged (%s); its "
                               "strings cannot be read safely (damaged file)" % (at, why))
        at = data.find(b"GCOL\x01", at + 1)
    _walked[path] = stamp


# -- the writer lock ------------------------------------------------------------------------

def writer_alive(run_file):
    """Whether a process holds the run's writer lock (`run.h5.lock`, an open-file-description
    fcntl lock): tested without taking it, as LenGen's readers do (docs/run-format.md)."""
    import fcntl

    try:
        fd = os.open(run_file + ".lock", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        # struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid.
        request = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        getlk = getattr(fcntl, "F_OFD_GETLK", 36)  # 36 on Linux
        answer = fcntl.fcntl(fd, getlk, request)
        return struct.unpack("hhqqi4x", answer)[0] != fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)


def writer_holder(run_file):
    """The lock file's first line, `host:pid` (and ` notes` for a notes edit), or ''."""
    try:
        with open(run_file + ".lock", "rb") as f:
            return f.read(300).split(b"\n")[0].decode("utf-8", "replace")
    except OSError:
        return ""


# -- files ----------------------------------------------------------------------------------

_SWMR_READ_ATTEMPTS = 8  # as LenGen's readers (engine/src/io/h5.cpp)
_hdf5 = []  # [the HDF5 library h5py uses, through ctypes] once looked up; [None] if not found


def _hdf5_library():
    """The HDF5 shared library h5py loaded, for the one call h5py does not wrap."""
    if not _hdf5:
        import ctypes
        import re

        lib = None
        try:
            with open("/proc/self/maps") as maps:
                paths = {l.split()[-1] for l in maps if "/" in l}
            for p in sorted(paths):
                if re.search(r"/libhdf5(_serial|_openmpi|_mpich)?[-.][^/]*\.so|"
                             r"/libhdf5(_serial|_openmpi|_mpich)?\.so", p) and "_hl" not in p:
                    lib = ctypes.CDLL(p)
                    lib.H5Pset_metadata_read_attempts.argtypes = [ctypes.c_int64, ctypes.c_uint]
                    break
        except (OSError, AttributeError):
            lib = None
        _hdf5.append(lib)
    return _hdf5[0]


def _open(path, swmr):
    """h5py.File of `path`, read-only; in SWMR mode with LenGen's few metadata read attempts:
    HDF5's default of 100, with growing sleeps, makes a damaged file look like a hang."""
    if not swmr:
        return h5py.File(path, "r")
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    lib = _hdf5_library()
    if lib is not None:
        lib.H5Pset_metadata_read_attempts(fapl.id, _SWMR_READ_ATTEMPTS)
    fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ,
                        fapl=fapl)
    return h5py.File(fid)

class File:
    """One LenGen HDF5 file open for reading; use as a context manager.

    Every accessor names the file and the object in the RunFileError it raises, whatever
    h5py raised (OSError, KeyError, ValueError, TypeError, RuntimeError).
    """

    def __init__(self, path, run_file=None):
        self.path = str(path)
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise RunFileError(self.path, None, "no such file") from None
        except OSError as e:
            raise RunFileError(self.path, None, "cannot be read (%s)" % e.strerror) from None
        if not stat.S_ISREG(st.st_mode):
            raise RunFileError(self.path, None, "not a regular file")
        try:
            with open(self.path, "rb") as f:
                head = f.read(8)
        except OSError as e:
            raise RunFileError(self.path, None, "cannot be read (%s)" % e.strerror) from None
        if head != b"\x89HDF\r\n\x1a\n":
            # HDF5 also looks for its signature at 512, 1024, ...; LenGen writes it at 0.
            raise RunFileError(self.path, None, "not an HDF5 file")
        # While a writer creates or reopens the file (milliseconds) HDF5's own lock refuses
        # readers: wait up to 3 s for it when a LenGen process holds the writer lock.
        deadline = time.monotonic() + 3
        while True:
            live = run_file is not None and writer_alive(run_file)
            try:
                self.h5 = _open(self.path, swmr=live)
                break
            except (OSError, ValueError, RuntimeError, KeyError) as e:
                first = e
            if run_file is not None and not live and "already open for write" in str(first):
                # A writer killed in SWMR mode left the consistency flags set: SWMR readers
                # read such a file (docs/run-format.md), plain ones refuse it.
                try:
                    self.h5 = _open(self.path, swmr=True)
                    break
                except (OSError, ValueError, RuntimeError, KeyError) as e:
                    if "not already open for SWMR writing" in str(e):
                        raise RunFileError(self.path, None, "left open for writing by a training "
                                           "killed as it opened it; `lengen train --resume` "
                                           "repairs it, `lengen delete` clears it") from None
                    first = e
            if run_file and writer_alive(run_file) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise RunFileError(self.path, None, "does not open as HDF5 (%s; damaged file)"
                               % _short(first)) from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.h5.close()
        except Exception:  # closing a damaged file may fail again; nothing to keep
            pass

    def error(self, obj, why):
        return RunFileError(self.path, "/" + obj.strip("/"), why)

    # Objects.

    def exists(self, path):
        """Whether the object exists (a damaged link table reads as damage, not absence)."""
        try:
            return path.strip("/") == "" or self.h5.get(path, getlink=True) is not None
        except Exception as e:
            raise self.error(path, "cannot be looked up (%s; damaged file)" % _short(e)) from None

    def _get(self, path, kind):
        try:
            obj = self.h5[path] if path.strip("/") else self.h5["/"]
        except KeyError as e:
            if "doesn't exist" in str(e) or "not found" in str(e).lower():
                raise self.error(path, "missing (damaged file)") from None
            raise self.error(path, "cannot be opened (%s; damaged file)" % _short(e)) from None
        except Exception as e:
            raise self.error(path, "cannot be opened (%s; damaged file)" % _short(e)) from None
        if not isinstance(obj, kind):
            raise self.error(path, "is a %s, not a %s (damaged file)"
                             % (_kind(obj), "group" if kind is h5py.Group else "dataset"))
        return obj

    def group(self, path):
        return self._get(path, h5py.Group)

    def dataset(self, path):
        return self._get(path, h5py.Dataset)

    def members(self, path):
        """Names in a group, sorted bytewise (HDF5's name order). The links are walked in native
        order: HDF5 1.10's increasing-order walk of a damaged dense group frees pointers it
        never set (found by LenGen's fuzzing)."""
        g = self.group(path)
        names = []

        def add(name, *_):
            names.append(name)

        try:
            g.id.links.iterate(add, idx_type=h5py.h5.INDEX_NAME, order=h5py.h5.ITER_NATIVE)
        except Exception as e:
            raise self.error(path, "its members cannot be listed (%s; damaged file)"
                             % _short(e)) from None
        out = sorted(names)
        return [n.decode("utf-8", "replace") if isinstance(n, bytes) else n for n in out]

    # Attributes.

    def has_attr(self, path, name):
        obj = self._any(path)
        try:
            return h5py.h5a.exists(obj.id, name.encode())
        except Exception as e:
            raise self.error(path, "its attributes cannot be read (%s; damaged file)"
                             % _short(e)) from None

    def attr_names(self, path):
        obj = self._any(path)
        names = []
        try:
            h5py.h5a.iterate(obj.id, lambda n, *_: names.append(n), index_type=h5py.h5.INDEX_NAME,
                             order=h5py.h5.ITER_NATIVE)
        except Exception as e:
            raise self.error(path, "its attributes cannot be listed (%s; damaged file)"
                             % _short(e)) from None
        return sorted(n.decode("utf-8", "replace") if isinstance(n, bytes) else n for n in names)

    def _any(self, path):
        try:
            return self.h5[path] if path.strip("/") else self.h5["/"]
        except Exception as e:
            raise self.error(path, "cannot be opened (%s; damaged file)" % _short(e)) from None

    def _attr(self, path, name):
        obj = self._any(path)
        where = path.rstrip("/") + "@" + name
        try:
            aid = h5py.h5a.open(obj.id, name.encode())
        except Exception:
            raise self.error(where, "missing (damaged file)") from None
        try:
            dtype = aid.dtype
            info = h5py.check_string_dtype(dtype)
            if info is not None and info.length is None:
                check_global_heaps(self.path)
            elif info is not None and info.length > _STRING_LIMIT:
                raise self.error(where, "claims a string of %d bytes (damaged file)"
                                 % info.length)
            value = obj.attrs[name]
        except RunFileError:
            raise
        except Exception as e:
            raise self.error(where, "cannot be read (%s; damaged file)" % _short(e)) from None
        _record(self.path, path, name)
        return value

    def attr_str(self, path, name, default=None, required=True):
        if not required and not self.has_attr(path, name):
            return default
        v = self._attr(path, name)
        return self._as_str(v, path.rstrip("/") + "@" + name)

    def _as_str(self, v, where):
        if isinstance(v, np.ndarray):
            if v.size != 1:
                raise self.error(where, "should be one string, holds %d values (damaged file)"
                                 % v.size)
            v = v.reshape(-1)[0]
        if isinstance(v, (bytes, np.bytes_)):
            v = bytes(v).split(b"\0")[0]
            try:
                return v.decode("utf-8")
            except UnicodeDecodeError:
                raise self.error(where, "is not UTF-8 text (damaged file)") from None
        if isinstance(v, str):
            return v
        raise self.error(where, "should be a string, holds %s (damaged file)"
                         % type(v).__name__)

    def attr_numbers(self, path, name, kind="f"):
        """An attribute's numbers as a 1-D array (float64, or int64 for kind 'i')."""
        where = path.rstrip("/") + "@" + name
        v = np.asarray(self._attr(path, name))
        if v.dtype.kind not in "iuf" or (kind == "i" and v.dtype.kind == "f"):
            raise self.error(where, "should be %s, holds %s (damaged file)"
                             % ("whole numbers" if kind == "i" else "numbers", v.dtype))
        return v.reshape(-1).astype(np.int64 if kind == "i" else np.float64)

    def attr_int(self, path, name, default=None, required=True, least=None, most=None):
        if not required and not self.has_attr(path, name):
            return default
        where = path.rstrip("/") + "@" + name
        v = np.asarray(self._attr(path, name))
        if v.dtype.kind not in "iu":
            raise self.error(where, "should be a whole number, holds %s (damaged file)" % v.dtype)
        if v.size != 1:
            raise self.error(where, "should be one number, holds %d (damaged file)" % v.size)
        value = int(v.reshape(-1)[0])  # uint64 seeds stay exact
        if (least is not None and value < least) or (most is not None and value > most):
            raise self.error(where, "is %d, outside %s..%s (damaged file)" % (value, least, most))
        return value

    def attr_float(self, path, name, default=None, required=True):
        if not required and not self.has_attr(path, name):
            return default
        where = path.rstrip("/") + "@" + name
        v = self.attr_numbers(path, name, "f")
        if v.size != 1:
            raise self.error(where, "should be one number, holds %d (damaged file)" % v.size)
        return float(v[0])

    def attr_value(self, path, name):
        """Any attribute as Python values: str, a number, or a list of numbers."""
        v = self._attr(path, name)
        where = path.rstrip("/") + "@" + name
        if isinstance(v, (bytes, np.bytes_, str)) or (
                isinstance(v, np.ndarray) and v.dtype.kind in "SUO"):
            return self._as_str(v, where)
        arr = np.asarray(v)
        if arr.dtype.kind not in "iufb":
            raise self.error(where, "holds %s (damaged file)" % arr.dtype)
        return arr.item() if arr.size == 1 and arr.ndim <= 1 else arr.tolist()

    # Datasets.

    def read(self, path, kind="f", ndim=None, shape=None, sel=None):
        """A dataset's values as a numpy array of float64 ('f'), int64 ('i') or float32 ('f4'),
        after its type and shape are checked; `sel` reads a part (a tuple of slices)."""
        ds = self.dataset(path)
        dt = ds.dtype
        if dt.kind not in "iuf" or (kind == "i" and dt.kind == "f"):
            raise self.error(path, "should hold %s, holds %s (damaged file)"
                             % ("whole numbers" if kind == "i" else "numbers", dt))
        if ndim is not None and ds.ndim != ndim:
            raise self.error(path, "has %d dimensions, %d expected (damaged file)"
                             % (ds.ndim, ndim))
        if shape is not None and tuple(ds.shape) != tuple(shape):
            raise self.error(path, "has shape %s, %s expected (damaged file)"
                             % (list(ds.shape), list(shape)))
        try:
            v = ds[sel] if sel is not None else ds[()]
        except Exception as e:
            raise self.error(path, "cannot be read (%s; damaged file)" % _short(e)) from None
        _record(self.path, path)
        target = {"f": np.float64, "i": np.int64, "f4": np.float32}[kind]
        return np.asarray(v).astype(target, copy=False)


    def check_format(self, name, what, newest, versioned=None):
        """The root says `format` = name and a `format_version` this package reads (at most
        `newest`), which it returns; else RunFileError: "not a LenGen <what> (HDF5, but
        foreign)" or "<versioned, else what> format N is newer than this package reads"."""
        fmt = self.attr_str("/", "format") if self.has_attr("/", "format") else None
        if fmt != name:
            raise RunFileError(self.path, None, "not a LenGen %s (HDF5, but foreign)" % what)
        version = self.attr_int("/", "format_version")
        if version > newest:
            raise RunFileError(self.path, None, "%s format %d is newer than this package reads "
                               "(%d)" % (versioned or what, version, newest))
        return version

    def curve_columns(self, path):
        """The four columns of a stored curve (mean, std, bootstrap_low, bootstrap_high), as
        evaluations and probes store them; one length or an error naming the group."""
        cols = {k: self.read(path + "/" + k, "f", ndim=1) for k in
                ("mean", "std", "bootstrap_low", "bootstrap_high")}
        n = len(cols["mean"])
        if any(len(v) != n for v in cols.values()):
            raise self.error(path, "has columns of different lengths (damaged file)")
        return cols, n
    def shape(self, path):
        ds = self.dataset(path)
        try:
            return tuple(int(n) for n in ds.shape)
        except Exception as e:
            raise self.error(path, "has no readable shape (%s; damaged file)" % _short(e)) from None

    def read_str(self, path):
        """A scalar string dataset (/config, /status)."""
        ds = self.dataset(path)
        info = h5py.check_string_dtype(ds.dtype)
        if info is None:
            raise self.error(path, "should be a string, holds %s (damaged or foreign file)"
                             % ds.dtype)
        if info.length is None:
            check_global_heaps(self.path)
        elif info.length > _STRING_LIMIT:
            raise self.error(path, "claims a string of %d bytes (damaged file)" % info.length)
        if ds.shape not in ((), (1,)):
            raise self.error(path, "should be one string, has shape %s (damaged file)"
                             % list(ds.shape))
        try:
            v = ds[()]
        except Exception as e:
            raise self.error(path, "cannot be read (%s; damaged file)" % _short(e)) from None
        _record(self.path, path)
        return self._as_str(v, path)


def _kind(obj):
    return "group" if isinstance(obj, h5py.Group) else (
        "dataset" if isinstance(obj, h5py.Dataset) else type(obj).__name__)


def _short(e):
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:200]
