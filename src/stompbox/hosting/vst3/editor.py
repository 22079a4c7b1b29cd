"""A VST3 plugin's editor in a top-level X11 window (Linux), for :meth:`VST3Plugin.show_editor`.

The host side of ``IPlugView`` on Linux (VST3 SDK ``pluginterfaces/gui/iplugview.h``): create the view
(``IEditController::createView("editor")``), check that it can embed in an X11 window (``"X11EmbedWindowID"``),
open a window sized from ``getSize``, give the view an ``IPlugFrame`` (``resizeView``) that also answers
``Steinberg::Linux::IRunLoop``, and ``attached(window)``. VST3 on Linux puts the event loop in the host: the
editor registers the file descriptor of its own X connection and its timers with the run loop, and the host
calls them back. :func:`run_editor` is that loop (``select()`` over the registered descriptors and our own X
connection, timers run when due) until the window is closed (``WM_DELETE_WINDOW``) or ``close_event`` is set;
then ``removed()`` and release. libX11 is used through ctypes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Callable
from ctypes import POINTER, c_char_p, c_int, c_int32, c_long, c_uint, c_uint64, c_ulong, c_void_p
from typing import Any

from . import abi
from .hostobjs import PyComObject

#: longest wait in the loop: how quickly a set ``close_event`` is noticed (seconds)
POLL_SECONDS = 0.02
#: window size when the view reports none
DEFAULT_SIZE = (640, 480)

# Xlib constants (X.h)
_STRUCTURE_NOTIFY_MASK = 1 << 17
_EXPOSURE_MASK = 1 << 15
_DESTROY_NOTIFY = 17
_CLIENT_MESSAGE = 33


class XAnyEvent(ctypes.Structure):
    _fields_ = [
        ("type", c_int),
        ("serial", c_ulong),
        ("send_event", c_int),
        ("display", c_void_p),
        ("window", c_ulong),
    ]


class XClientMessageEvent(ctypes.Structure):
    _fields_ = [
        *XAnyEvent._fields_,  # the header every X event starts with
        ("message_type", c_ulong),
        ("format", c_int),
        ("data", c_long * 5),
    ]


class XEvent(ctypes.Union):
    """Xlib's ``XEvent`` (24 longs), with the members the loop reads."""

    _fields_ = [("type", c_int), ("xany", XAnyEvent), ("xclient", XClientMessageEvent), ("pad", c_long * 24)]


class XErrorEvent(ctypes.Structure):
    """Xlib's ``XErrorEvent``: what the server said was wrong with a request."""

    _fields_ = [
        ("type", c_int),
        ("display", c_void_p),
        ("resourceid", c_ulong),
        ("serial", c_ulong),
        ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte),
        ("minor_code", ctypes.c_ubyte),
    ]


_XLIB: Any = None
_XLIB_LOCK = threading.Lock()
_log = logging.getLogger("stompbox.hosting")
#: X protocol errors seen by the handler installed by :func:`xlib` (most recent last, at most 100)
x_errors: list[tuple[int, int, int]] = []  # (error_code, request_code, resource id)


_X_ERROR_PROTO = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(XErrorEvent))
_previous_x_error_handler: Any = None  # an application's own handler, which ours passes errors on to


def _on_x_error(display: int, event: Any) -> int:
    """Xlib's default handler prints the error and calls ``exit()``; a plugin that draws on a window another
    client destroyed would take the whole Python process down. Ours logs the error and carries on, or, when
    the application had installed a handler of its own (a Tk GUI does), passes the error on to it."""
    if _previous_x_error_handler is not None:
        return int(_previous_x_error_handler(display, event))
    e = event[0]
    x_errors.append((e.error_code, e.request_code, e.resourceid))
    del x_errors[:-100]
    _log.warning(
        "X11 error %d (request %d, resource 0x%x) from a plugin editor, ignored",
        e.error_code,
        e.request_code,
        e.resourceid,
    )
    return 0


_X_ERROR_HANDLER = _X_ERROR_PROTO(_on_x_error)


def xlib() -> Any:
    """libX11 through ctypes, with the prototypes the editor host uses (``RuntimeError`` if it is missing).
    ``XInitThreads`` is called once, before any other Xlib call of ours, and an X error handler that logs
    protocol errors instead of exiting the process is installed (it serves every X connection in the process,
    the plugins' own included)."""
    global _XLIB
    with _XLIB_LOCK:
        if _XLIB is not None:
            return _XLIB
        name = ctypes.util.find_library("X11") or "libX11.so.6"
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            raise RuntimeError("show_editor() needs libX11 (Debian package libx11-6): it is not installed.") from None
        protos: dict[str, tuple[Any, list[Any]]] = {
            "XInitThreads": (c_int, []),
            "XOpenDisplay": (c_void_p, [c_char_p]),
            "XCloseDisplay": (c_int, [c_void_p]),
            "XDefaultScreen": (c_int, [c_void_p]),
            "XRootWindow": (c_ulong, [c_void_p, c_int]),
            "XBlackPixel": (c_ulong, [c_void_p, c_int]),
            "XCreateSimpleWindow": (
                c_ulong,
                [c_void_p, c_ulong, c_int, c_int, c_uint, c_uint, c_uint, c_ulong, c_ulong],
            ),
            "XDestroyWindow": (c_int, [c_void_p, c_ulong]),
            "XStoreName": (c_int, [c_void_p, c_ulong, c_char_p]),
            "XInternAtom": (c_ulong, [c_void_p, c_char_p, c_int]),
            "XSetWMProtocols": (c_int, [c_void_p, c_ulong, POINTER(c_ulong), c_int]),
            "XSelectInput": (c_int, [c_void_p, c_ulong, c_long]),
            "XMapWindow": (c_int, [c_void_p, c_ulong]),
            "XResizeWindow": (c_int, [c_void_p, c_ulong, c_uint, c_uint]),
            "XSync": (c_int, [c_void_p, c_int]),
            "XFlush": (c_int, [c_void_p]),
            "XPending": (c_int, [c_void_p]),
            "XNextEvent": (c_int, [c_void_p, POINTER(XEvent)]),
            "XConnectionNumber": (c_int, [c_void_p]),
            "XSetErrorHandler": (c_void_p, [c_void_p]),
        }
        for fn_name, (restype, argtypes) in protos.items():
            fn = getattr(lib, fn_name)
            fn.restype, fn.argtypes = restype, argtypes
        lib.XInitThreads()
        _install_x_error_handler(lib)
        _XLIB = lib
        return lib


def _install_x_error_handler(lib: Any) -> None:
    """Put :func:`_on_x_error` in place of Xlib's default handler, keeping an application's own handler (called
    from ours). Which one was there is told by installing the default (``XSetErrorHandler(NULL)``) and
    reading its address back."""
    global _previous_x_error_handler
    ours = ctypes.cast(_X_ERROR_HANDLER, c_void_p).value
    previous = lib.XSetErrorHandler(ours)
    lib.XSetErrorHandler(None)  # the default is installed now
    default = lib.XSetErrorHandler(ours)
    if previous and previous not in (default, ours):
        _previous_x_error_handler = _X_ERROR_PROTO(previous)


# ---------------------------------------------------------------------------------------------------- host objects
class RunLoop(PyComObject):
    """``Steinberg::Linux::IRunLoop``: the descriptors and timers an editor registers, run by :func:`run_editor`."""

    IIDS = (abi.IRUNLOOP_IID,)
    METHODS = [
        ("registerEventHandler", c_int32, (c_void_p, c_int32)),
        ("unregisterEventHandler", c_int32, (c_void_p,)),
        ("registerTimer", c_int32, (c_void_p, c_uint64)),
        ("unregisterTimer", c_int32, (c_void_p,)),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.handlers: list[tuple[int, int]] = []  # (IEventHandler*, fd)
        self.timers: dict[int, list[float]] = {}  # ITimerHandler* -> [interval s, next due (monotonic)]

    def registerEventHandler(self, handler: int | None, fd: int) -> int:  # noqa: N802 (the C++ name)
        if not handler or fd < 0:
            return abi.K_INVALID_ARGUMENT
        self.handlers.append((int(handler), int(fd)))
        return abi.K_RESULT_OK

    def unregisterEventHandler(self, handler: int | None) -> int:  # noqa: N802
        before = len(self.handlers)
        self.handlers = [(h, fd) for h, fd in self.handlers if h != handler]
        return abi.K_RESULT_OK if len(self.handlers) < before else abi.K_INVALID_ARGUMENT

    def registerTimer(self, handler: int | None, milliseconds: int) -> int:  # noqa: N802
        if not handler:
            return abi.K_INVALID_ARGUMENT
        interval = max(1, int(milliseconds)) / 1000.0
        self.timers[int(handler)] = [interval, time.monotonic() + interval]
        return abi.K_RESULT_OK

    def unregisterTimer(self, handler: int | None) -> int:  # noqa: N802
        return abi.K_RESULT_OK if self.timers.pop(int(handler or 0), None) is not None else abi.K_INVALID_ARGUMENT

    # -- run by the host loop
    def run_due_timers(self) -> float:
        """Call the timers that are due; returns the seconds until the next one (``inf`` if none)."""
        now = time.monotonic()
        for handler, entry in list(self.timers.items()):
            if entry[1] <= now and self.timers.get(handler) is entry:
                entry[1] = max(entry[1] + entry[0], now)  # no burst of catch-up calls after a stall
                abi.ComPtr(handler, "ITimerHandler").onTimer()
        now = time.monotonic()
        return min((entry[1] - now for entry in self.timers.values()), default=float("inf"))

    def dispatch(self, ready: list[int]) -> None:
        """Tell the handlers of the readable descriptors."""
        for handler, fd in list(self.handlers):
            if fd in ready and (handler, fd) in self.handlers:
                abi.ComPtr(handler, "IEventHandler").onFDIsSet(fd)


class PlugFrame(PyComObject):
    """``IPlugFrame`` of one editor window; it also answers ``IRunLoop`` (with its :class:`RunLoop`), which is
    where Linux editors look for the host's run loop."""

    IIDS = (abi.IPLUGFRAME_IID,)
    METHODS = [("resizeView", c_int32, (c_void_p, POINTER(abi.ViewRect)))]

    def __init__(self, run_loop: RunLoop, on_resize: Callable[[int, int, int], int]) -> None:
        super().__init__()
        self.run_loop = run_loop
        self._on_resize = on_resize

    def queryInterface(self, iid_ptr: int, out: Any) -> int:  # noqa: N802
        if ctypes.string_at(iid_ptr, 16) == abi.IRUNLOOP_IID:
            self.run_loop.addRef()
            out[0] = self.run_loop.ptr
            return abi.K_RESULT_OK
        return super().queryInterface(iid_ptr, out)

    def resizeView(self, view: int, rect: Any) -> int:  # noqa: N802
        if not view or not rect:
            return abi.K_INVALID_ARGUMENT
        r = rect[0]
        return self._on_resize(int(view), r.right - r.left, r.bottom - r.top)


# ---------------------------------------------------------------------------------------------------- the loop
def check_display() -> str:
    """The X display to open (``$DISPLAY``); ``RuntimeError`` when there is none. Loads libX11 (and calls
    ``XInitThreads``) before any plugin code can make an Xlib call."""
    if not sys.platform.startswith("linux"):
        raise RuntimeError(f"show_editor() is implemented for Linux (X11) only, not {sys.platform}.")
    display = os.environ.get("DISPLAY", "")
    if not display:
        raise RuntimeError(
            "show_editor() needs an X11 display, but the DISPLAY environment variable is not set (no display "
            "server is available: run it in a desktop session, or start Xvfb and set DISPLAY)."
        )
    xlib()
    return display


def create_view(controller: abi.ComPtr | None, plugin_name: str) -> abi.ComPtr:
    """The plugin's editor view (``createView("editor")``) if it can embed in an X11 window, else
    ``RuntimeError``."""
    if controller is None:
        raise RuntimeError(f"Plugin '{plugin_name}' has no edit controller, so it has no editor.")
    name = ctypes.create_string_buffer(b"editor")
    ptr = controller.createView(ctypes.addressof(name))
    if not ptr:
        raise RuntimeError(f"Plugin '{plugin_name}' has no editor (createView returned no view).")
    view = abi.ComPtr(ptr, "IPlugView")
    if view.isPlatformTypeSupported(abi.K_PLATFORM_TYPE_X11) != abi.K_RESULT_OK:
        view.release()
        raise RuntimeError(f"The editor of plugin '{plugin_name}' cannot be embedded in an X11 window.")
    return view


def run_editor(view: abi.ComPtr, display_name: str, title: str, close_event: threading.Event | None) -> None:
    """Show ``view`` (from :func:`create_view`; released here) in a new top-level window on ``display_name``
    and run its events until the window is closed or ``close_event`` is set."""
    x = xlib()
    display = x.XOpenDisplay(display_name.encode())
    if not display:
        view.release()
        raise RuntimeError(f"show_editor(): cannot open the X11 display {display_name!r}.")
    window = 0
    run_loop = RunLoop()
    attached = False

    def on_resize(view_ptr: int, width: int, height: int) -> int:
        if width <= 0 or height <= 0:
            return abi.K_INVALID_ARGUMENT
        if window:
            x.XResizeWindow(display, window, width, height)
            x.XFlush(display)
        rect = abi.ViewRect(0, 0, width, height)
        abi.ComPtr(view_ptr, "IPlugView").onSize(ctypes.byref(rect))
        return abi.K_RESULT_OK

    frame = PlugFrame(run_loop, on_resize)
    try:
        rect = abi.ViewRect()
        width, height = DEFAULT_SIZE
        if view.getSize(ctypes.byref(rect)) == abi.K_RESULT_OK and rect.right > rect.left and rect.bottom > rect.top:
            width, height = rect.right - rect.left, rect.bottom - rect.top
        screen = x.XDefaultScreen(display)
        black = x.XBlackPixel(display, screen)
        window = x.XCreateSimpleWindow(display, x.XRootWindow(display, screen), 0, 0, width, height, 0, black, black)
        x.XStoreName(display, window, title.encode("utf-8", "replace"))
        wm_delete = c_ulong(x.XInternAtom(display, b"WM_DELETE_WINDOW", 0))
        x.XSetWMProtocols(display, window, ctypes.byref(wm_delete), 1)
        x.XSelectInput(display, window, _STRUCTURE_NOTIFY_MASK | _EXPOSURE_MASK)
        view.setFrame(frame.ptr)
        x.XMapWindow(display, window)
        x.XSync(display, 0)
        if view.attached(c_void_p(window), abi.K_PLATFORM_TYPE_X11) != abi.K_RESULT_OK:
            raise RuntimeError(f"The editor of '{title}' refused to open in an X11 window (attached() failed).")
        attached = True
        x.XFlush(display)
        if _loop(x, display, window, wm_delete.value, run_loop, close_event):
            window = 0  # destroyed by someone else: nothing left to destroy
    finally:
        try:
            if attached:
                view.removed()
            view.setFrame(None)
            view.release()
        finally:
            if window:
                x.XDestroyWindow(display, window)
            x.XCloseDisplay(display)
            frame.dispose()
            run_loop.dispose()


def _loop(x: Any, display: int, window: int, wm_delete: int, run_loop: RunLoop, close_event: Any) -> bool:
    """Serve the editor's descriptors and timers and our window's events until the window is closed or
    ``close_event`` is set; True if the window was destroyed (by another client)."""
    own_fd = x.XConnectionNumber(display)
    event = XEvent()
    while close_event is None or not close_event.is_set():
        wait = min(POLL_SECONDS, max(0.0, run_loop.run_due_timers()))
        if not x.XPending(display):
            fds = {own_fd} | {fd for _, fd in run_loop.handlers}
            try:
                ready, _, _ = select.select(list(fds), [], [], wait)
            except (OSError, ValueError):  # a descriptor the plugin closed without unregistering it
                ready = []
                time.sleep(wait)
            run_loop.dispatch([fd for fd in ready if fd != own_fd])
        while x.XPending(display):
            x.XNextEvent(display, ctypes.byref(event))
            if event.xany.window != window:
                continue
            if event.type == _CLIENT_MESSAGE and event.xclient.data[0] == wm_delete:
                return False
            if event.type == _DESTROY_NOTIFY:
                return True
    return False


__all__ = ["PlugFrame", "RunLoop", "check_display", "create_view", "run_editor", "xlib"]
