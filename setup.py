"""Builds and installs the spatialhash Python module with `pip install .`, offline:

    /usr/bin/python3 -m pip install --no-build-isolation .

The extension is compiled by the project's own CMake build (python/CMakeLists.txt, target
spatialhash_python), so it gets exactly the flags of a CMake build (-ffp-contract=off, OpenMP, the
AVX-512 filter file's own flags). Needs cmake, a C++20 compiler, python3-dev, pybind11-dev and
numpy, all Debian packages (scripts/setup.sh installs them). Build files go to build-pip/.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD_DIR = ROOT / "build-pip"


class CMakeBuild(build_ext):
    """Configures the repository with only the Python module enabled, builds it, and copies the
    resulting spatialhash._core into the wheel."""

    def build_extension(self, ext):
        cmake_dir = BUILD_DIR / "cmake"
        configure = [
            "cmake",
            "-S", str(ROOT),
            "-B", str(cmake_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython_EXECUTABLE={sys.executable}",
            "-DSPATIALHASH_BUILD_PYTHON=ON",
            "-DSPATIALHASH_BUILD_TESTS=OFF",
            "-DSPATIALHASH_BUILD_EXAMPLES=OFF",
            "-DSPATIALHASH_BUILD_BENCH=OFF",
            "-DSPATIALHASH_BUILD_CLI=OFF",
        ]
        if shutil.which("ninja") and not (cmake_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(configure, check=True)
        subprocess.run(
            ["cmake", "--build", str(cmake_dir), "--target", "spatialhash_python", "-j", jobs],
            check=True,
        )
        built = sorted((cmake_dir / "python" / "spatialhash").glob("_core*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one built spatialhash._core, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


BUILD_DIR.mkdir(exist_ok=True)
setup(
    packages=["spatialhash"],
    package_dir={"spatialhash": "python/spatialhash"},
    package_data={"spatialhash": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("spatialhash._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(BUILD_DIR)}, "egg_info": {"egg_base": str(BUILD_DIR)}},
    zip_safe=False,
)
