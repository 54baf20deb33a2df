"""figlang: figurative-language benchmarks, methods and dataset builders in one toolkit."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("figlang")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+local"

__all__ = ["__version__"]
