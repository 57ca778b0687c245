"""load_c's compiling: a private, verified compile cache and a key that covers what built the library.

The cache folder is the user's own and writable by no one else; a library is loaded only if its SHA-256 is
the one stored beside it (a planted library, one writable by others or a symbolic link is rebuilt or
refused, never run); the key covers the compiler, its version, the flags and $CC (split as a shell
splits it); a missing or failing compiler, or one without -march=native, is one line (compare: exit 2)."""
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

import symdyn
import symdyn.codegen.c.loader as cload
from conftest import GCC, ROOT, assert_one_line, child_env, posix
from symdyn.errors import CModuleError


def _libraries(cache):
    return sorted(p.name for p in cache.glob("*.so"))


def test_cache_is_private_and_holds_only_verified_libraries(arm_c, tmp_path):
    symdyn.load_c(arm_c)
    cache = tmp_path / "cache"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    names = sorted(p.name for p in cache.iterdir())
    assert len(names) == 3 and names[0].endswith(".so") and names[1:] == [names[0] + ".lock", names[0] + ".sha256"]
    for p in cache.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0
    lib = cache / names[0]
    import hashlib
    assert (cache / names[2]).read_text().strip() == hashlib.sha256(lib.read_bytes()).hexdigest()


@posix
@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_cache_folder_writable_by_others_is_refused(arm_c, tmp_path, mode):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, mode)
    with pytest.raises(CModuleError) as caught:
        symdyn.load_c(arm_c)
    assert_one_line(str(caught.value), f"{cache}: writable by others")
    assert "SYMDYN_CACHE" in str(caught.value) and _libraries(cache) == []


def test_cache_folder_of_another_user_is_refused(arm_c, tmp_path, monkeypatch):
    symdyn.load_c(arm_c)
    monkeypatch.setattr(cload.os, "geteuid", lambda: os.stat(tmp_path).st_uid + 4242)
    with pytest.raises(CModuleError, match="owned by another user"):
        symdyn.load_c(arm_c)


_PLANTED = r"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void) { FILE *f = fopen("%s", "w"); if (f) fclose(f); }
"""


def _plant(tmp_path, target):
    """Replace a cached library by one whose constructor creates a marker file."""
    marker = tmp_path / "planted-ran"
    src = tmp_path / "planted.c"
    src.write_text(_PLANTED % marker)
    tmp_lib = target.parent / "planted.so"
    subprocess.run([GCC, "-shared", "-fPIC", str(src), "-o", str(tmp_lib)], check=True)
    os.chmod(tmp_lib, 0o600)
    os.replace(tmp_lib, target)
    return marker


def _load_elsewhere(c_path):
    """load_c in another process: fills the cache without mapping its library into this one."""
    code = f"import symdyn; symdyn.load_c({str(c_path)!r})"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=child_env())


def test_a_planted_library_is_not_run(arm_c, tmp_path):
    """Same name, the user's own file, but not the content whose hash is stored: recompiled, never loaded."""
    _load_elsewhere(arm_c)
    cache = tmp_path / "cache"
    lib = cache / _libraries(cache)[0]
    marker = _plant(tmp_path, lib)
    module = symdyn.load_c(arm_c)
    assert not marker.exists()
    assert module.mass_matrix(np.zeros(2)).shape == (2, 2)


@posix
def test_a_library_writable_by_others_is_refused(arm_c, tmp_path):
    _load_elsewhere(arm_c)
    cache = tmp_path / "cache"
    lib = cache / _libraries(cache)[0]
    marker = _plant(tmp_path, lib)
    import hashlib
    (cache / (lib.name + ".sha256")).write_text(hashlib.sha256(lib.read_bytes()).hexdigest() + "\n")
    os.chmod(lib, 0o666)
    with pytest.raises(CModuleError, match="writable by others"):
        symdyn.load_c(arm_c)
    assert not marker.exists()


@posix
@pytest.mark.parametrize("entry", [".so", ".so.sha256"])
def test_a_symbolic_link_in_the_cache_is_refused(arm_c, tmp_path, entry):
    """Neither followed for reading nor for writing: the file it points to stays as it was."""
    _load_elsewhere(arm_c)
    cache = tmp_path / "cache"
    link = cache / (_libraries(cache)[0][:-3] + entry)
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    link.unlink()
    link.symlink_to(victim)
    with pytest.raises(CModuleError, match="not a regular file"):
        symdyn.load_c(arm_c)
    assert victim.read_text() == "untouched\n"


_FAKE_CC = """#!/bin/sh
for a in "$@"; do if [ "$a" = "--version" ]; then echo "fake cc {version}"; exit 0; fi; done
exec {gcc} "$@"
"""


@posix
def test_key_covers_compiler_version_and_flags(arm_c, tmp_path, monkeypatch):
    """Another compiler version, other flags, another $CC: another library, not the cached one."""
    bin_dir = tmp_path / "my tools"                   # a space in the path: $CC is split like a shell does
    bin_dir.mkdir()
    fake = bin_dir / "cc"
    cache = tmp_path / "cache"

    def build(version):
        fake.write_text(_FAKE_CC.format(version=version, gcc=GCC))
        fake.chmod(0o755)
        cload._COMPILERS.clear()
        symdyn.load_c(arm_c)
        return _libraries(cache)

    monkeypatch.setenv("CC", f'"{fake}" -w')
    assert len(build("1.0")) == 1
    assert len(build("1.0")) == 1                      # the same: cached
    assert len(build("2.0")) == 2                      # another version
    monkeypatch.setattr(cload, "OPT_FLAGS", ("-O1",))
    assert len(build("2.0")) == 3                      # other flags
    monkeypatch.setenv("CC", f'"{fake}" -w -fno-fast-math')
    assert len(build("2.0")) == 4                      # another command line


def test_compile_note_on_stderr_once(arm_c, capfd):
    symdyn.load_c(arm_c)
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and err.startswith("symdyn: compiling arm.c once, then cached (") and "-O3" in err
    symdyn.load_c(arm_c)
    assert capfd.readouterr().err == ""


def test_default_flags():
    assert {"-O3", "-ffp-contract=fast", "-march=native"} <= set(cload.OPT_FLAGS)


@posix
def test_multi_word_cc(arm_c, monkeypatch):
    env = shutil.which("env")
    if not env:
        pytest.skip("no env")
    monkeypatch.setenv("CC", f"{env} SYMDYN_UNUSED=1 {GCC}")              # like `ccache gcc`
    module = symdyn.load_c(arm_c)
    assert module.gravity(np.zeros(2)).shape == (2,)


@pytest.mark.parametrize("cc", ["/nonexistent/bin/cc", "no-such-compiler-here", "ccache-missing gcc"])
def test_no_compiler_is_one_line(tmp_path, monkeypatch, two_arms, cc):
    _, sets = two_arms
    for name in ("arm.h", "arm.c", "arm.json"):
        (tmp_path / name).write_text(sets[0][name])
    monkeypatch.setenv("SYMDYN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", cc)
    with pytest.raises(CModuleError) as caught:
        symdyn.load_c(tmp_path / "arm.c")
    message = str(caught.value)
    assert_one_line(message, f"{tmp_path / 'arm.c'}: cannot compile: no C compiler ('{cc.split()[0]}' not found)")
    assert "--no-c" in message and "install" in message


def test_compare_without_compiler_exits_2(tmp_path):
    env = child_env(CC="/nonexistent/bin/cc", SYMDYN_CACHE=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-m", "symdyn.cli", "compare", str(ROOT / "robots" / "planar6.yaml"),
                             "--states", "2"], capture_output=True, text=True, env=env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "no C compiler" in result.stderr and "--no-c" in result.stderr


def test_failed_compilation_is_one_line_with_details(arm_c, two_arms):
    _, sets = two_arms
    arm_c.write_text(sets[0]["arm.c"] + "\nthis is not C;\n")
    with pytest.raises(CModuleError) as caught:
        symdyn.load_c(arm_c)
    assert_one_line(str(caught.value), f"{arm_c}: compiling failed (")
    assert "error" in str(caught.value) and "this is not C" in caught.value.details


_NO_NATIVE_CC = """#!/bin/sh
for a in "$@"; do if [ "$a" = "-march=native" ]; then echo "error: unsupported option '-march=native'" >&2; exit 1; fi; done
exec {gcc} "$@"
"""


@posix
def test_compiler_without_march_native(arm_c, tmp_path, monkeypatch):
    fake = tmp_path / "oldcc"
    fake.write_text(_NO_NATIVE_CC.format(gcc=GCC))
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    assert symdyn.load_c(arm_c).gravity(np.zeros(2)).shape == (2,)
