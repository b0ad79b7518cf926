#!/usr/bin/env python3
"""Windows detection under Wine: the test seeds the run's Wine prefix with
what an AMD machine has (the display driver's registry key, amdhip64_6.dll
in System32, a HIP SDK under Program Files with hipInfo.exe, HIP_PATH) and
checks what 'cfapkg.exe detect' and 'plan' make of it."""
import json
import os
import pathlib
import shutil
import sys

import harness

BIN, FAKE_HIPINFO, SAMPLE = sys.argv[1], sys.argv[2], sys.argv[3]
PREFIX = pathlib.Path(os.environ["WINEPREFIX"])
CLASS = r"HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}\0100"
check = harness.Checks()


def wine(program, *args, env=None):
    """A Windows program (or Wine's own reg.exe) in the test's Wine prefix."""
    return harness.run(program, *args, env=env, drop=("CFAPKG_SYSROOT",))


def seed():
    for value, data in (("MatchingDeviceId", r"PCI\VEN_1002&DEV_7590&SUBSYS_E4901DA2&REV_C0"),
                        ("DriverDesc", "AMD Radeon RX 9060 XT"),
                        ("DriverVersion", "32.0.21025.1024")):
        r = wine("reg", "add", CLASS, "/v", value, "/t", "REG_SZ", "/d", data, "/f")
        check(f"seed registry {value}", r.returncode == 0, r.stdout + r.stderr)
    sys32 = PREFIX / "drive_c" / "windows" / "system32"
    (sys32 / "amdhip64_6.dll").write_bytes(b"MZ")
    sdk = PREFIX / "drive_c" / "Program Files" / "AMD" / "ROCm" / "6.4" / "bin"
    sdk.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE_HIPINFO, sdk / "hipInfo.exe")
    shutil.copy(SAMPLE, sdk / "hipInfo.exe.txt")


def main():
    seed()
    env = {"HIP_PATH": "C:\\Program Files\\AMD\\ROCm\\6.4\\"}
    r = wine(BIN, "detect", "--json", env=env)
    try:
        d = json.loads(r.stdout)
    except json.JSONDecodeError:
        check("detect prints JSON", False, r.stdout + r.stderr)
        return check.report()
    gpus = d["gpus"]
    check("GPU from the driver's registry key", gpus and gpus[0]["name"] == "AMD Radeon RX 9060 XT"
          and gpus[0]["pci_id"] == "1002:7590 rev c0", json.dumps(gpus))
    check("gfx from hipInfo", gpus and gpus[0]["gfx"] == "gfx1200"
          and gpus[0]["source"] == "hipinfo", json.dumps(gpus))
    check("hipInfo's second device (integrated) listed, discrete chosen",
          len(gpus) == 2 and gpus[1]["gfx"] == "gfx1036" and gpus[1]["integrated"]
          and d["selected"] == 0, json.dumps(d))
    check("driver from DriverVersion", d["driver"]["version"] == "25.8.1"
          and "32.0.21025.1024" in (d["driver"]["detail"] or ""), json.dumps(d["driver"]))
    check("HIP runtime in System32", [x["major"] for x in d["hip_runtimes"]] == [6]
          and "amdhip64_6.dll" in d["hip_runtimes"][0]["file"], json.dumps(d["hip_runtimes"]))
    check("HIP SDK from HIP_PATH and Program Files",
          [s["version"] for s in d["hip_sdks"]] == ["6.4"], json.dumps(d["hip_sdks"]))
    r = wine(BIN, "plan", "pytorch-cuda-stack", "--json", env=env)
    p = json.loads(r.stdout or "{}")
    have = {(x["name"], x["version"]) for x in p.get("packages", [])}
    check("plan from Windows detection", r.returncode == 0 and ("hip-sdk", "6.4.2") in have
          and ("zluda", "6-preview.69") in have and p["unchecked"] == [], r.stdout + r.stderr)
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
