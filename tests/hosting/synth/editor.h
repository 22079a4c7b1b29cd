/*
 * The test synth's trivial X11 editor (included by synth.c when built with -DSYNTH_EDITOR; link with -ldl).
 *
 * An IPlugView for "X11EmbedWindowID": on attached() it opens two X connections of its own (libX11 through
 * dlopen): one for events, one for drawing. It creates a child window of the host's window on the first,
 * registers that connection's file descriptor and a 30 ms timer
 * with the host's Steinberg::Linux::IRunLoop (found by querying the IPlugFrame), and asks the host to resize
 * it from its initial 300x200 to 320x240 (IPlugFrame::resizeView; the host answers with onSize).
 * - X events are read only in the descriptor handler: Expose marks the view dirty; a button press at x sets
 *   the gain to x / width through IComponentHandler::beginEdit / performEdit / endEdit.
 * - Drawing happens only in the timer: a grey background (0x303030) and a green bar (0x20C040) whose width is
 *   gain * width. So a drawn bar proves the timer runs, and a gain change after a click proves the
 *   descriptor handler runs.
 * - Drawing (and resizing) go through the second connection. Xlib reads whatever the server has sent while it
 *   writes on a connection; had the timer drawn on the event connection, a click could land in Xlib's queue
 *   during a draw, leave the descriptor unreadable, and never be seen.
 */
#include <dlfcn.h>

static const uint8_t IPLUGVIEW_IID[16] = IID(0x5BC32507, 0xD06049EA, 0xA6151B52, 0x2B755B29);
static const uint8_t IEVENTHANDLER_IID[16] = IID(0x561E65C9, 0x13A0496F, 0x813A2C35, 0x654D7983);
static const uint8_t ITIMERHANDLER_IID[16] = IID(0x10BDD94F, 0x41424774, 0x821FAD8F, 0xECA72CA9);
static const uint8_t IRUNLOOP_IID[16] = IID(0x18C35366, 0x97764F1A, 0x9C5B8385, 0x7A871389);

#define EDITOR_W0 300
#define EDITOR_H0 200
#define EDITOR_W1 320
#define EDITOR_H1 240

typedef struct {
    int32_t left, top, right, bottom;
} ViewRect;

/* --- the host's interfaces */
typedef struct IRunLoop IRunLoop;
typedef struct {
    FUNKNOWN_METHODS(IRunLoop);
    tresult (*registerEventHandler)(IRunLoop *self, void *handler, int fd);
    tresult (*unregisterEventHandler)(IRunLoop *self, void *handler);
    tresult (*registerTimer)(IRunLoop *self, void *handler, uint64_t milliseconds);
    tresult (*unregisterTimer)(IRunLoop *self, void *handler);
} IRunLoopVtbl;
struct IRunLoop {
    const IRunLoopVtbl *v;
};

typedef struct IPlugFrame IPlugFrame;
typedef struct {
    FUNKNOWN_METHODS(IPlugFrame);
    tresult (*resizeView)(IPlugFrame *self, void *view, ViewRect *rect);
} IPlugFrameVtbl;
struct IPlugFrame {
    const IPlugFrameVtbl *v;
};

typedef struct IComponentHandler IComponentHandler;
typedef struct {
    FUNKNOWN_METHODS(IComponentHandler);
    tresult (*beginEdit)(IComponentHandler *self, uint32_t id);
    tresult (*performEdit)(IComponentHandler *self, uint32_t id, double value);
    tresult (*endEdit)(IComponentHandler *self, uint32_t id);
    tresult (*restartComponent)(IComponentHandler *self, int32_t flags);
} IComponentHandlerVtbl;
struct IComponentHandler {
    const IComponentHandlerVtbl *v;
};

/* --- the few Xlib entry points and structs we use (from Xlib.h, without needing its headers) */
typedef unsigned long XID;
typedef struct {
    int type;
    unsigned long serial;
    int send_event;
    void *display;
    XID window;
    XID root;
    XID subwindow;
    unsigned long time;
    int x, y;
} XButtonEventLite;
typedef union {
    int type;
    XButtonEventLite button;
    long pad[24];
} XEventLite;
#define X_BUTTON_PRESS 4
#define X_EXPOSE 12
#define X_EXPOSURE_MASK (1L << 15)
#define X_BUTTON_PRESS_MASK (1L << 2)

static struct {
    void *lib;
    void *(*OpenDisplay)(const char *);
    int (*CloseDisplay)(void *);
    XID (*CreateSimpleWindow)(void *, XID, int, int, unsigned, unsigned, unsigned, unsigned long, unsigned long);
    int (*DestroyWindow)(void *, XID);
    int (*MapWindow)(void *, XID);
    int (*SelectInput)(void *, XID, long);
    int (*ConnectionNumber)(void *);
    int (*Pending)(void *);
    int (*NextEvent)(void *, XEventLite *);
    int (*Flush)(void *);
    int (*Sync)(void *, int);
    int (*ResizeWindow)(void *, XID, unsigned, unsigned);
    int (*DefaultScreen)(void *);
    void *(*DefaultGC)(void *, int);
    int (*SetForeground)(void *, void *, unsigned long);
    int (*FillRectangle)(void *, XID, void *, int, int, unsigned, unsigned);
} X;

static int load_xlib(void) {
    if (X.lib) return 1;
    void *lib = dlopen("libX11.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
#define SYM(name) (*(void **)&X.name = dlsym(lib, "X" #name)) != NULL
    if (!(SYM(OpenDisplay) && SYM(CloseDisplay) && SYM(CreateSimpleWindow) && SYM(DestroyWindow) && SYM(MapWindow) &&
          SYM(SelectInput) && SYM(ConnectionNumber) && SYM(Pending) && SYM(NextEvent) && SYM(Flush) && SYM(Sync) &&
          SYM(ResizeWindow) && SYM(DefaultScreen) && SYM(DefaultGC) && SYM(SetForeground) && SYM(FillRectangle))) {
        dlclose(lib);
        return 0;
    }
#undef SYM
    X.lib = lib;
    return 1;
}

/* --- the view, with its two handler objects */
typedef struct View View;
typedef struct {
    const void *v;
    View *view;
} Face; /* an interface of the view other than IPlugView, with a pointer back to it */

struct View {
    const struct ViewVtbl *v;
    Face event_handler; /* Linux::IEventHandler */
    Face timer_handler; /* Linux::ITimerHandler */
    int32_t refs;
    Synth *synth;
    IPlugFrame *frame;
    IRunLoop *run_loop;
    void *display; /* events: the descriptor the host watches */
    void *draw;    /* drawing and resizing */
    XID window;
    int width, height;
    int dirty;
};

struct ViewVtbl {
    tresult (*queryInterface)(View *self, const uint8_t *iid, void **obj);
    uint32_t (*addRef)(View *self);
    uint32_t (*release)(View *self);
    tresult (*isPlatformTypeSupported)(View *self, const char *type);
    tresult (*attached)(View *self, void *parent, const char *type);
    tresult (*removed)(View *self);
    tresult (*onWheel)(View *self, float distance);
    tresult (*onKeyDown)(View *self, uint16_t key, int16_t code, int16_t modifiers);
    tresult (*onKeyUp)(View *self, uint16_t key, int16_t code, int16_t modifiers);
    tresult (*getSize)(View *self, ViewRect *size);
    tresult (*onSize)(View *self, ViewRect *size);
    tresult (*onFocus)(View *self, uint8_t state);
    tresult (*setFrame)(View *self, IPlugFrame *frame);
    tresult (*canResize)(View *self);
    tresult (*checkSizeConstraint)(View *self, ViewRect *rect);
};

static tresult view_query(View *self, const uint8_t *iid, void **obj) {
    if (!obj) return kInvalidArgument;
    *obj = NULL;
    if (iid_eq(iid, FUNKNOWN_IID) || iid_eq(iid, IPLUGVIEW_IID))
        *obj = self;
    else if (iid_eq(iid, IEVENTHANDLER_IID))
        *obj = &self->event_handler;
    else if (iid_eq(iid, ITIMERHANDLER_IID))
        *obj = &self->timer_handler;
    if (!*obj) return kNoInterface;
    self->refs++;
    return kResultOk;
}
static uint32_t view_add_ref(View *self) { return (uint32_t)++self->refs; }
static tresult view_removed(View *self);
static uint32_t view_release(View *self) {
    if (--self->refs > 0) return (uint32_t)self->refs;
    if (self->display) view_removed(self);
    synth_release(self->synth);
    free(self);
    return 0;
}

static void view_paint(View *self) {
    if (!self->draw || !self->window) return;
    void *gc = X.DefaultGC(self->draw, X.DefaultScreen(self->draw));
    int bar = (int)(self->synth->ctrl_params[PARAM_GAIN] * self->width + 0.5);
    X.SetForeground(self->draw, gc, 0x303030);
    X.FillRectangle(self->draw, self->window, gc, 0, 0, (unsigned)self->width, (unsigned)self->height);
    if (bar > 0) {
        X.SetForeground(self->draw, gc, 0x20C040);
        X.FillRectangle(self->draw, self->window, gc, 0, 0, (unsigned)bar, (unsigned)self->height);
    }
    X.Flush(self->draw);
    self->dirty = 0;
}

/* Linux::IEventHandler::onFDIsSet: the only place X events are read */
static void on_fd_is_set(Face *face, int fd) {
    View *self = face->view;
    (void)fd;
    if (!self->display) return;
    while (X.Pending(self->display)) {
        XEventLite e;
        X.NextEvent(self->display, &e);
        if (e.type == X_EXPOSE) self->dirty = 1;
        if (e.type == X_BUTTON_PRESS && e.button.window == self->window && self->width > 0) {
            double value = clamp01((double)e.button.x / self->width);
            IComponentHandler *handler = (IComponentHandler *)self->synth->component_handler;
            self->synth->ctrl_params[PARAM_GAIN] = value;
            if (handler) {
                handler->v->beginEdit(handler, PARAM_GAIN);
                handler->v->performEdit(handler, PARAM_GAIN, value);
                handler->v->endEdit(handler, PARAM_GAIN);
            }
            self->dirty = 1;
        }
    }
}
/* Linux::ITimerHandler::onTimer: the only place the view draws */
static void on_timer(Face *face) { view_paint(face->view); }

static tresult face_query(Face *face, const uint8_t *iid, void **obj) { return view_query(face->view, iid, obj); }
static uint32_t face_add_ref(Face *face) { return view_add_ref(face->view); }
static uint32_t face_release(Face *face) { return view_release(face->view); }

static const struct {
    tresult (*queryInterface)(Face *, const uint8_t *, void **);
    uint32_t (*addRef)(Face *);
    uint32_t (*release)(Face *);
    void (*onFDIsSet)(Face *, int);
} EVENT_HANDLER_VTBL = {face_query, face_add_ref, face_release, on_fd_is_set};

static const struct {
    tresult (*queryInterface)(Face *, const uint8_t *, void **);
    uint32_t (*addRef)(Face *);
    uint32_t (*release)(Face *);
    void (*onTimer)(Face *);
} TIMER_HANDLER_VTBL = {face_query, face_add_ref, face_release, on_timer};

static tresult view_is_platform_type_supported(View *self, const char *type) {
    (void)self;
    return type && strcmp(type, "X11EmbedWindowID") == 0 ? kResultOk : kResultFalse;
}
static tresult view_attached(View *self, void *parent, const char *type) {
    if (view_is_platform_type_supported(self, type) != kResultOk || !parent || self->display) return kInvalidArgument;
    IRunLoop *run_loop = NULL;
    if (!self->frame || self->frame->v->queryInterface(self->frame, IRUNLOOP_IID, (void **)&run_loop) != kResultOk ||
        !run_loop)
        return kResultFalse; /* on Linux the host must provide a run loop */
    if (!load_xlib() || !(self->display = X.OpenDisplay(NULL)) || !(self->draw = X.OpenDisplay(NULL))) {
        if (self->display) X.CloseDisplay(self->display);
        self->display = NULL;
        run_loop->v->release(run_loop);
        return kResultFalse;
    }
    self->run_loop = run_loop;
    self->window = X.CreateSimpleWindow(self->display, (XID)(uintptr_t)parent, 0, 0, (unsigned)self->width,
                                        (unsigned)self->height, 0, 0, 0x303030);
    X.SelectInput(self->display, self->window, X_EXPOSURE_MASK | X_BUTTON_PRESS_MASK);
    X.MapWindow(self->display, self->window);
    X.Sync(self->display, 0); /* the window exists before the drawing connection uses it */
    run_loop->v->registerEventHandler(run_loop, &self->event_handler, X.ConnectionNumber(self->display));
    run_loop->v->registerTimer(run_loop, &self->timer_handler, 30);
    ViewRect wanted = {0, 0, EDITOR_W1, EDITOR_H1};
    self->frame->v->resizeView(self->frame, self, &wanted); /* the host calls onSize back */
    return kResultOk;
}
static tresult view_removed(View *self) {
    if (!self->display) return kResultFalse;
    if (self->run_loop) {
        self->run_loop->v->unregisterEventHandler(self->run_loop, &self->event_handler);
        self->run_loop->v->unregisterTimer(self->run_loop, &self->timer_handler);
        self->run_loop->v->release(self->run_loop);
        self->run_loop = NULL;
    }
    X.CloseDisplay(self->draw); /* sends what it still holds while the window exists */
    X.DestroyWindow(self->display, self->window);
    X.CloseDisplay(self->display);
    self->display = self->draw = NULL;
    self->window = 0;
    return kResultOk;
}
static tresult view_not_handled(View *self) {
    (void)self;
    return kResultFalse;
}
static tresult view_on_wheel(View *self, float distance) {
    (void)distance;
    return view_not_handled(self);
}
static tresult view_on_key(View *self, uint16_t key, int16_t code, int16_t modifiers) {
    (void)key;
    (void)code;
    (void)modifiers;
    return view_not_handled(self);
}
static tresult view_get_size(View *self, ViewRect *size) {
    if (!size) return kInvalidArgument;
    *size = (ViewRect){0, 0, self->width, self->height};
    return kResultOk;
}
static tresult view_on_size(View *self, ViewRect *size) {
    if (!size || size->right <= size->left || size->bottom <= size->top) return kInvalidArgument;
    self->width = size->right - size->left;
    self->height = size->bottom - size->top;
    if (self->draw) {
        X.ResizeWindow(self->draw, self->window, (unsigned)self->width, (unsigned)self->height);
        X.Flush(self->draw);
    }
    self->dirty = 1;
    return kResultOk;
}
static tresult view_on_focus(View *self, uint8_t state) {
    (void)state;
    return view_not_handled(self);
}
static tresult view_set_frame(View *self, IPlugFrame *frame) {
    self->frame = frame;
    return kResultOk;
}
static tresult view_check_size_constraint(View *self, ViewRect *rect) {
    (void)rect;
    return view_not_handled(self); /* fixed size */
}

static const struct ViewVtbl VIEW_VTBL = {
    view_query, view_add_ref, view_release, view_is_platform_type_supported, view_attached, view_removed,
    view_on_wheel, view_on_key, view_on_key, view_get_size, view_on_size, view_on_focus, view_set_frame,
    view_not_handled, view_check_size_constraint,
};

static void *e_create_view(void *self, const char *name) {
    Synth *s = FROM(self, controller);
    if (!name || strcmp(name, "editor") != 0) return NULL;
    View *view = calloc(1, sizeof *view);
    if (!view) return NULL;
    view->v = &VIEW_VTBL;
    view->event_handler = (Face){&EVENT_HANDLER_VTBL, view};
    view->timer_handler = (Face){&TIMER_HANDLER_VTBL, view};
    view->refs = 1;
    view->synth = s;
    view->width = EDITOR_W0;
    view->height = EDITOR_H0;
    synth_add_ref(s); /* the view keeps its controller alive */
    return view;
}
