"""Scaling tests start real servers like the robustness ones: same fixtures."""

from tests.robustness.conftest import static_root

__all__ = ["static_root"]
