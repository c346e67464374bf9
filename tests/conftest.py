"""Headless pygame for every test, set before anything imports it."""

import os
import tempfile

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
# numpy's small matrix products (the champion's, the planner's) on one OpenBLAS thread, as the
# agents' commands run them (agents/__init__.py says why).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# SDL complains on stderr without a runtime dir; give it a private one.
os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="ballenvs-xdg-"))
