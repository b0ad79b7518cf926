"""cfapkg's PyTorch probe.

'cfapkg doctor --venv DIR' runs it with the venv's own interpreter
(python -c, the text built into cfapkg), with the environment applied;
tests/gpu/venv_probe_real.sh runs the same file against a real CUDA torch,
where what passes is what ZLUDA has to imitate.  It prints only lines of
this form on standard output (exceptions become CHECK lines):

  TORCH VERSION CUDA
  CHECK NAME STATUS LIBRARY DETAIL   STATUS: OK FAILED WRONG SKIPPED;
                                     LIBRARY: cublas, cuda, ... or -
  LIB FAMILY PATH                    a CUDA library the process loaded
"""
import os
import re
import sys

# A CUDA library's file name: cublas64_11.dll, libcublas.so.13, nvcuda.dll.
FILE = re.compile(r"(?<![A-Za-z0-9_])(?:lib)?(cublasLt|cublas|cusparseLt|cusparse|cufftw|cufft|"
                  r"cudnn|nvrtc|cudart|cuda|nvcuda|nvidia-ml|nvml|nccl)"
                  r"(?:64_[0-9_]+\.dll|\.dll|\.so(?:\.[0-9]+)*)", re.I)
FAMILY = {"cublaslt": "cublaslt", "cublas": "cublas", "cusparselt": "cusparselt",
          "cusparse": "cusparse", "cufftw": "cufftw", "cufft": "cufft", "cudnn": "cudnn",
          "nvrtc": "nvrtc", "cudart": "cudart", "cuda": "cuda", "nvcuda": "cuda",
          "nvidia-ml": "nvml", "nvml": "nvml", "nccl": "nccl"}
# Error texts of the libraries, as torch passes them on.
STATUS = (("CUBLASLT", "cublaslt"), ("CUBLAS", "cublas"), ("CUDNN", "cudnn"), ("CUFFT", "cufft"), ("CUSPARSE", "cusparse"),
          ("NVRTC", "nvrtc"))


def say(*fields):
    print(" ".join(str(f) for f in fields), flush=True)


def one_line(text):
    return " ".join(str(text).split())[:900] or "-"


def library_in(text, default="-"):
    """The library an error message points at, else default."""
    m = FILE.search(text)
    if m:
        return FAMILY[m.group(1).lower()]
    for word, family in STATUS:
        if word in text.upper():
            return family
    return default


def check(name, status, library, detail):
    say("CHECK", name.replace(" ", "_"), status, library, one_line(detail))


def windows_modules():
    import ctypes
    from ctypes import wintypes
    k32 = ctypes.WinDLL("kernel32")
    psapi = ctypes.WinDLL("psapi")
    k32.GetCurrentProcess.restype = wintypes.HANDLE
    psapi.EnumProcessModules.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.HMODULE),
                                         wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
    k32.GetModuleFileNameW.argtypes = [wintypes.HMODULE, wintypes.LPWSTR, wintypes.DWORD]
    mods = (wintypes.HMODULE * 4096)()
    need = wintypes.DWORD()
    if not psapi.EnumProcessModules(k32.GetCurrentProcess(), mods, ctypes.sizeof(mods),
                                    ctypes.byref(need)):
        return []
    buf = ctypes.create_unicode_buffer(32768)
    count = min(need.value // ctypes.sizeof(wintypes.HMODULE), len(mods))
    return [buf.value for i in range(count) if k32.GetModuleFileNameW(mods[i], buf, 32768)]


def loaded():
    """The files of the CUDA libraries this process has loaded."""
    try:
        if os.name == "nt":
            paths = windows_modules()
        else:
            with open("/proc/self/maps") as f:
                paths = [line.split(None, 5)[5].strip() for line in f
                         if len(line.split(None, 5)) == 6]
    except (OSError, ValueError, AttributeError):
        return
    seen = set()
    for path in paths:
        m = FILE.fullmatch(os.path.basename(path))
        if m and path not in seen:
            seen.add(path)
            say("LIB", FAMILY[m.group(1).lower()], path)


def matmul(torch):
    """A product on the GPU against the same one on the CPU.  TF32 (which
    ZLUDA setups turn on) keeps about three decimal digits: 1e-2 of the
    largest value is far inside that and far outside a wrong kernel."""
    g = torch.Generator().manual_seed(1234)
    a = torch.randn(64, 64, generator=g)
    b = torch.randn(64, 64, generator=g)
    want = a @ b
    got = (a.to("cuda") @ b.to("cuda")).to("cpu")
    torch.cuda.synchronize()
    err = (got - want).abs().max().item()
    scale = want.abs().max().item()
    # "not <=": a NaN is wrong too
    status = "WRONG" if not err <= 1e-2 * scale else "OK"
    check("matmul", status, "cublas", "64x64 float32: max error %.3g of %.3g" % (err, scale))


def main():
    try:
        import torch
    except BaseException as e:  # a failed DLL or soname load is an OSError
        check("import torch", "FAILED", library_in(str(e)), "%s: %s" % (type(e).__name__, e))
        loaded()
        return
    say("TORCH", torch.__version__, torch.version.cuda or "-")
    check("import torch", "OK", "-", torch.__file__)
    try:
        ok = torch.cuda.is_available()
        why = "" if ok else "torch.cuda.is_available() is False"
        if not ok:
            torch.cuda.init()  # raises with the driver's reason
    except BaseException as e:
        ok, why = False, "%s: %s" % (type(e).__name__, e)
    if not ok:
        check("CUDA available", "FAILED", library_in(why, "cuda"), why)
        check("device", "SKIPPED", "cuda", "needs CUDA")
        check("matmul", "SKIPPED", "cublas", "needs CUDA")
        loaded()
        return
    check("CUDA available", "OK", "cuda", "%d device(s)" % torch.cuda.device_count())
    try:
        check("device", "OK", "cuda", torch.cuda.get_device_name(0))
    except BaseException as e:
        check("device", "FAILED", library_in(str(e), "cuda"), "%s: %s" % (type(e).__name__, e))
    try:
        matmul(torch)
    except BaseException as e:
        check("matmul", "FAILED", library_in(str(e), "cublas"), "%s: %s" % (type(e).__name__, e))
    loaded()


if __name__ == "__main__":
    if hasattr(sys.stdout, "reconfigure"):  # a device name or path the console cannot show
        sys.stdout.reconfigure(errors="replace")
    main()
