"""``VST3Plugin.show_editor()`` on X11, under a private Xvfb server (the ``xvfb_display`` fixture; skipped
without Xvfb). The Zam editors (DPF, drawn with OpenGL) run under Xvfb through Mesa's software GLX: they open,
draw, and close. They use the host's run loop for a 16 ms timer only; our own instrument's trivial editor
(tests/hosting/synth, built with ``-DSYNTH_EDITOR``) also registers its X connection's descriptor and asks the
host to resize its window, so the rest of the run loop and ``IPlugFrame`` are exercised too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
import threading
import time
from ctypes import POINTER, byref, c_char_p, c_int, c_long, c_uint, c_ulong, c_void_p

import numpy as np
import pytest

import _audio
from stompbox.hosting import load_plugin
from stompbox.hosting.vst3 import abi
from stompbox.hosting.vst3 import editor as editor_module
from stompbox.hosting.vst3.editor import XAnyEvent, XEvent

VST3_DIR = "/usr/lib/vst3"
needs_zam = pytest.mark.skipif(not os.path.isdir(f"{VST3_DIR}/ZamComp.vst3"), reason="zam-plugins not installed")
IS_VIEWABLE = 2
needs_xlib = pytest.mark.skipif(ctypes.util.find_library("X11") is None, reason="libX11 not installed")


class XWindowAttributes(ctypes.Structure):
    _fields_ = [
        ("x", c_int),
        ("y", c_int),
        ("width", c_int),
        ("height", c_int),
        ("border_width", c_int),
        ("depth", c_int),
        ("visual", c_void_p),
        ("root", c_ulong),
        ("class_", c_int),
        ("bit_gravity", c_int),
        ("win_gravity", c_int),
        ("backing_store", c_int),
        ("backing_planes", c_ulong),
        ("backing_pixel", c_ulong),
        ("save_under", c_int),
        ("colormap", c_ulong),
        ("map_installed", c_int),
        ("map_state", c_int),
        ("all_event_masks", c_long),
        ("your_event_mask", c_long),
        ("do_not_propagate_mask", c_long),
        ("override_redirect", c_int),
        ("screen", c_void_p),
    ]


class XButtonEvent(ctypes.Structure):
    _fields_ = [
        *XAnyEvent._fields_,
        ("root", c_ulong),
        ("subwindow", c_ulong),
        ("time", c_ulong),
        ("x", c_int),
        ("y", c_int),
        ("x_root", c_int),
        ("y_root", c_int),
        ("state", c_uint),
        ("button", c_uint),
        ("same_screen", c_int),
    ]


class XClient:
    """A second X client, as a window manager or a test harness would be: lists, inspects and closes windows."""

    def __init__(self, display_name: str) -> None:
        x = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        for name, restype, argtypes in [
            ("XOpenDisplay", c_void_p, [c_char_p]),
            ("XCloseDisplay", c_int, [c_void_p]),
            ("XDefaultRootWindow", c_ulong, [c_void_p]),
            (
                "XQueryTree",
                c_int,
                [c_void_p, c_ulong, POINTER(c_ulong), POINTER(c_ulong), POINTER(POINTER(c_ulong)), POINTER(c_uint)],
            ),
            ("XFetchName", c_int, [c_void_p, c_ulong, POINTER(c_char_p)]),
            ("XGetWindowAttributes", c_int, [c_void_p, c_ulong, POINTER(XWindowAttributes)]),
            ("XGetImage", c_void_p, [c_void_p, c_ulong, c_int, c_int, c_uint, c_uint, c_ulong, c_int]),
            ("XDestroyImage", c_int, [c_void_p]),
            ("XInternAtom", c_ulong, [c_void_p, c_char_p, c_int]),
            ("XSendEvent", c_int, [c_void_p, c_ulong, c_int, c_long, POINTER(XEvent)]),
            ("XSync", c_int, [c_void_p, c_int]),
            ("XFree", c_int, [c_void_p]),
        ]:
            fn = getattr(x, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.x = x
        self.display = x.XOpenDisplay(display_name.encode())
        assert self.display, f"cannot open {display_name}"

    def close(self) -> None:
        self.x.XCloseDisplay(self.display)

    def children(self, window: int | None = None) -> list[int]:
        x = self.x
        root, parent, kids, count = c_ulong(), c_ulong(), POINTER(c_ulong)(), c_uint()
        window = x.XDefaultRootWindow(self.display) if window is None else window
        if not x.XQueryTree(self.display, window, byref(root), byref(parent), byref(kids), byref(count)):
            return []
        found = [kids[i] for i in range(count.value)]
        if kids:
            x.XFree(kids)
        return found

    def name(self, window: int) -> str | None:
        out = c_char_p()
        if not self.x.XFetchName(self.display, window, byref(out)) or not out.value:
            return None
        return out.value.decode()  # (the few bytes XFetchName allocates are not worth an XFree in a test)

    def attributes(self, window: int) -> XWindowAttributes:
        attrs = XWindowAttributes()
        assert self.x.XGetWindowAttributes(self.display, window, byref(attrs))
        return attrs

    def windows_named(self, name: str) -> list[int]:
        return [w for w in self.children() if self.name(w) == name]

    def pixels(self, window: int) -> np.ndarray:
        """The window's pixels, ``(height, width)`` 0xRRGGBB (the server is 24-bit TrueColor)."""
        attrs = self.attributes(window)
        image = self.x.XGetImage(self.display, window, 0, 0, attrs.width, attrs.height, 0xFFFFFFFF, 2)
        assert image
        try:
            data = ctypes.cast(image + 16, POINTER(c_void_p))[0]  # XImage: width, height, xoffset, format, data
            bytes_per_line = ctypes.cast(image + 44, POINTER(c_int))[0]
            raw = np.frombuffer(ctypes.string_at(data, bytes_per_line * attrs.height), np.uint32)
            return raw.reshape(attrs.height, -1)[:, : attrs.width] & 0xFFFFFF
        finally:
            self.x.XDestroyImage(image)

    def distinct_colours(self, window: int) -> int:
        """How many different pixel values the window shows (1 for a window nothing has drawn in)."""
        return len(np.unique(self.pixels(window)))

    def click(self, window: int, x: int, y: int) -> None:
        """Send a button press at (x, y) to the client that listens for them on ``window``."""
        event = XEvent()
        button = ctypes.cast(byref(event), POINTER(XButtonEvent))[0]
        button.type, button.window, button.x, button.y, button.button = 4, window, x, y, 1  # ButtonPress
        button.same_screen = 1
        assert self.x.XSendEvent(self.display, window, 0, 1 << 2, byref(event))  # ButtonPressMask
        self.x.XSync(self.display, 0)

    def close_window(self, window: int) -> None:
        """Ask the window's client to close it, as a window manager does (``WM_DELETE_WINDOW``)."""
        event = XEvent()
        event.xclient.type = 33  # ClientMessage
        event.xclient.window = window
        event.xclient.message_type = self.x.XInternAtom(self.display, b"WM_PROTOCOLS", 0)
        event.xclient.format = 32
        event.xclient.data[0] = self.x.XInternAtom(self.display, b"WM_DELETE_WINDOW", 0)
        assert self.x.XSendEvent(self.display, window, 0, 0, byref(event))
        self.x.XSync(self.display, 0)


@pytest.fixture
def x_client(xvfb_display, monkeypatch):
    monkeypatch.setenv("DISPLAY", xvfb_display)
    client = XClient(xvfb_display)
    yield client
    client.close()


class EditorThread:
    """``show_editor(close_event)`` running on a thread."""

    def __init__(self, plugin) -> None:
        self.close_event = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(plugin,), daemon=True)
        self.thread.start()

    def _run(self, plugin) -> None:
        try:
            plugin.show_editor(self.close_event)
        except BaseException as e:  # noqa: BLE001 (handed to the test)
            self.error = e

    def join(self, timeout: float) -> float:
        start = time.monotonic()
        self.thread.join(timeout)
        return time.monotonic() - start


def wait_for(condition, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.05)
    return condition()


# ---------------------------------------------------------------------------------------------------- errors
def test_no_display_is_a_clear_error(vst3_synth, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(RuntimeError, match="DISPLAY"):
        load_plugin(vst3_synth).show_editor()


@needs_xlib
def test_plugin_without_editor_is_a_clear_error(vst3_synth, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":1999")  # never opened: the missing view is found first
    with pytest.raises(RuntimeError, match="has no editor"):
        load_plugin(vst3_synth).show_editor()


@needs_xlib
def test_unreachable_display_is_a_clear_error(vst3_synth_with_editor, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":1999")
    synth = load_plugin(vst3_synth_with_editor)
    with pytest.raises(RuntimeError, match="cannot open the X11 display"):
        synth.show_editor()
    assert synth([([0x90, 69, 127], 0.0)], 0.1, 44100)[0, 0] == np.float32(0.5)  # the view was released cleanly


X_ERROR_SCRIPT = """
import ctypes
from stompbox.hosting.vst3 import editor
x = editor.xlib()
display = x.XOpenDisplay(None)
x.XDestroyWindow(display, 0x7FFFFFF)  # no such window: the server answers BadWindow (3)
x.XSync(display, 0)
x.XCloseDisplay(display)
print(editor.x_errors)
"""


@needs_xlib
def test_an_x_error_is_logged_not_fatal(xvfb_display):
    """Xlib's default error handler exits the process; a plugin editor drawing on a window another client has
    destroyed must not take Python down with it."""
    env = {**os.environ, "DISPLAY": xvfb_display}
    done = subprocess.run([sys.executable, "-c", X_ERROR_SCRIPT], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(3, 4, 134217727)]"  # BadWindow, X_DestroyWindow, the id we sent
    assert "X11 error 3 (request 4, resource 0x7ffffff)" in done.stderr


APP_HANDLER_SCRIPT = """
import ctypes, ctypes.util
from stompbox.hosting.vst3 import editor
lib = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
lib.XSetErrorHandler.restype = ctypes.c_void_p
lib.XSetErrorHandler.argtypes = [ctypes.c_void_p]
seen = []
app = editor._X_ERROR_PROTO(lambda display, event: seen.append(event[0].error_code) or 0)
lib.XSetErrorHandler(ctypes.cast(app, ctypes.c_void_p))  # the application's own handler, as Tk installs one
x = editor.xlib()
display = x.XOpenDisplay(None)
x.XDestroyWindow(display, 0x7FFFFFF)
x.XSync(display, 0)
x.XCloseDisplay(display)
print(seen, editor.x_errors)
"""


@needs_xlib
def test_an_applications_own_x_error_handler_is_kept(xvfb_display):
    """Only Xlib's default handler (which exits) is replaced: a handler the application installed itself gets
    the errors, as before the editor host was loaded."""
    env = {**os.environ, "DISPLAY": xvfb_display}
    done = subprocess.run(
        [sys.executable, "-c", APP_HANDLER_SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3] []"


def test_edits_from_the_editor_reach_the_audio(vst3_synth):
    """An editor reports a moved control through ``IComponentHandler::performEdit``; the next block gets it."""
    synth = load_plugin(vst3_synth)
    handler = synth._instance.handler
    vtable = ctypes.cast(handler.ptr, POINTER(POINTER(c_void_p))).contents
    perform_edit = abi.proto(ctypes.c_int32, ctypes.c_uint32, ctypes.c_double)(vtable[4])
    assert perform_edit(handler.ptr, 0, 0.25) == abi.K_RESULT_OK  # parameter 0: gain
    assert synth.gain == 0.25
    assert synth([([0x90, 69, 127], 0.0)], 0.1, 44100)[0, 0] == np.float32(0.25)


# ---------------------------------------------------------------------------------------------------- Zam editors
@needs_zam
@pytest.mark.parametrize("name", ["ZamComp", "ZamEQ2"])
def test_zam_editor_opens_draws_and_closes_on_the_event(name, x_client):
    plugin = load_plugin(f"{VST3_DIR}/{name}.vst3")
    editor = EditorThread(plugin)
    try:
        windows = wait_for(lambda: x_client.windows_named(name))
        assert editor.error is None and len(windows) == 1, editor.error
        top = windows[0]
        assert wait_for(lambda: x_client.attributes(top).map_state == IS_VIEWABLE)
        child = wait_for(lambda: x_client.children(top))  # the plugin's own window, embedded in ours
        # the plugin maps its window a moment after creating it: wait for that too (a loaded machine saw it
        # still unmapped)
        assert len(child) == 1 and wait_for(lambda: x_client.attributes(child[0]).map_state == IS_VIEWABLE)
        size = x_client.attributes(top)
        assert size.width > 100 and size.height > 50
        assert wait_for(lambda: x_client.distinct_colours(child[0]) > 20)  # the editor drew itself
        # audio runs on this thread while the editor runs on its own
        x = _audio.noise(0.5, channels=1, amplitude=0.3)
        assert np.array_equal(plugin(x, 44100), load_plugin(f"{VST3_DIR}/{name}.vst3")(x, 44100))
    finally:
        editor.close_event.set()
        took = editor.join(5.0)
    assert not editor.thread.is_alive() and took < 2.0
    assert editor.error is None
    assert x_client.windows_named(name) == []


@needs_zam
def test_closing_the_window_returns(x_client):
    plugin = load_plugin(f"{VST3_DIR}/ZamDelay.vst3")
    editor = EditorThread(plugin)
    try:
        windows = wait_for(lambda: x_client.windows_named("ZamDelay"))
        assert windows, editor.error
        x_client.close_window(windows[0])
        took = editor.join(5.0)
        assert not editor.thread.is_alive() and took < 2.0 and editor.error is None
        assert x_client.windows_named("ZamDelay") == []
        # and the editor opens again
        again = EditorThread(plugin)
        assert wait_for(lambda: x_client.windows_named("ZamDelay"))
        again.close_event.set()
        assert again.join(5.0) < 2.0 and again.error is None
    finally:
        editor.close_event.set()


# ---------------------------------------------------------------------------------------------------- our editor
def test_own_editor_uses_the_run_loop_frame_and_component_handler(vst3_synth_with_editor, x_client):
    """The synth's editor (tests/hosting/synth/editor.h) opens at 300x200 and asks the host for 320x240; it
    draws only from its timer and reads X events only from its descriptor handler, so a drawn bar shows the
    timer runs and a click that moves the gain shows the descriptor handler runs and the edit reaches audio."""
    synth = load_plugin(vst3_synth_with_editor)
    errors_before = len(editor_module.x_errors)
    green, grey = 0x20C040, 0x303030
    editor = EditorThread(synth)
    try:
        windows = wait_for(lambda: x_client.windows_named("StompboxTestSynth"))
        assert len(windows) == 1, editor.error
        top = windows[0]
        child = wait_for(lambda: x_client.children(top))
        assert len(child) == 1
        view = child[0]
        assert wait_for(lambda: (x_client.attributes(top).width, x_client.attributes(top).height) == (320, 240))
        assert wait_for(lambda: (x_client.attributes(view).width, x_client.attributes(view).height) == (320, 240))

        def bar_width() -> int | None:
            row = x_client.pixels(view)[120]
            if set(np.unique(row)) - {green, grey}:
                return None
            return int(np.count_nonzero(row == green))

        assert wait_for(lambda: bar_width() == 160)  # gain 0.5 of 320 pixels
        x_client.click(view, 80, 100)
        assert wait_for(lambda: synth.gain == 0.25)  # performEdit reached the host
        assert wait_for(lambda: bar_width() == 80)
        assert synth([([0x90, 69, 127], 0.0)], 0.1, 44100)[0, 0] == np.float32(0.25)  # and the processor
    finally:
        editor.close_event.set()
        took = editor.join(5.0)
    assert not editor.thread.is_alive() and took < 2.0 and editor.error is None
    assert x_client.windows_named("StompboxTestSynth") == []
    assert len(editor_module.x_errors) == errors_before  # no request of the editor's failed
    # the plugin (whose view has been released) still works
    assert synth([([0x90, 69, 127], 0.0)], 0.1, 44100)[0, 0] == np.float32(0.25)
