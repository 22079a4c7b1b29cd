/*
 * StompboxTestSynth: a tiny VST3 instrument written directly against the VST3 binary interface in plain C,
 * for stompbox's host tests (Debian ships no VST3 instrument). Compiled by the tests with the system C
 * compiler into StompboxTestSynth.vst3/Contents/<arch>-linux/StompboxTestSynth.so.
 *
 * The layouts, interface ids and vtable orders follow the MIT-licensed VST3 SDK pluginterfaces headers
 * (non-COM build, as on Linux: an interface id is the four 32-bit words of DECLARE_CLASS_IID, big-endian).
 * One object is the component, the audio processor and the edit controller ("single component").
 *
 * Sound: up to 16 voices, no envelope. A note's oscillator starts at the top of its cycle (cosine, or a
 * falling saw starting at +1), so its first sample, exactly at the note-on's sampleOffset, is its full level
 * velocity * gain; a note-off silences the voice from its own sampleOffset on. Pitch: 440 * 2^((n - 69) / 12)
 * Hz (plus the note-on's tuning in cents).
 * Parameters: 0 "Gain" (linear, plain = normalised, text "%.2f", default 0.5), 1 "Waveform" (two steps:
 * "Sine", "Saw"). Changes arrive through IParameterChanges in process() and apply from their sampleOffset.
 * IMidiMapping: MIDI CC 7 (volume) on any channel is the gain; no other controller is mapped.
 * State (IComponent::getState/setState): "SBSY", version 1, then both normalised values as doubles (LE).
 *
 * Built with -DSYNTH_EDITOR, the controller also creates a trivial X11 editor (IPlugView, platform
 * "X11EmbedWindowID"): a child window of the host's window, whose X connection is served through the host's
 * Steinberg::Linux::IRunLoop (registerEventHandler on the connection's fd, and a 30 ms timer that repaints).
 * libX11 is opened with dlopen when the editor is attached, so no X11 headers are needed to build.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int32_t tresult;
#define kResultOk 0
#define kResultFalse 1
#define kNoInterface (-1)
#define kInvalidArgument 2
#define kNotImplemented 3

#define W(x) (uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16), (uint8_t)((uint32_t)(x) >> 8), (uint8_t)(x)
#define IID(a, b, c, d) {W(a), W(b), W(c), W(d)}

static const uint8_t FUNKNOWN_IID[16] = IID(0x00000000, 0x00000000, 0xC0000000, 0x00000046);
static const uint8_t IPLUGINBASE_IID[16] = IID(0x22888DDB, 0x156E45AE, 0x8358B348, 0x08190625);
static const uint8_t IPLUGINFACTORY_IID[16] = IID(0x7A4D811C, 0x52114A1F, 0xAED9D2EE, 0x0B43BF9F);
static const uint8_t IPLUGINFACTORY2_IID[16] = IID(0x0007B650, 0xF24B4C0B, 0xA464EDB9, 0xF00B2ABB);
static const uint8_t IPLUGINFACTORY3_IID[16] = IID(0x4555A2AB, 0xC1234E57, 0x9B122910, 0x36878931);
static const uint8_t ICOMPONENT_IID[16] = IID(0xE831FF31, 0xF2D54301, 0x928EBBEE, 0x25697802);
static const uint8_t IAUDIOPROCESSOR_IID[16] = IID(0x42043F99, 0xB7DA453C, 0xA569E79D, 0x9AAEC33D);
static const uint8_t IEDITCONTROLLER_IID[16] = IID(0xDCD7BBE3, 0x7742448D, 0xA874AACC, 0x979C759E);
static const uint8_t IMIDIMAPPING_IID[16] = IID(0xDF0FF9F7, 0x49B74669, 0xB63AB732, 0x7ADBF5E5);
/* our class id: "STMPBXSYNTH1" and a version word */
static const uint8_t SYNTH_CID[16] = IID(0x53544D50, 0x42585359, 0x4E544831, 0x00000001);

/* ------------------------------------------------------------------------------------------- constants */
enum { kAudio = 0, kEvent = 1 };
enum { kInput = 0, kOutput = 1 };
enum { kMain = 0 };
enum { kDefaultActive = 1 };
enum { kSample32 = 0, kSample64 = 1 };
enum { kNoteOnEvent = 0, kNoteOffEvent = 1 };
enum { kCanAutomate = 1, kIsList = 1 << 3 };
#define kSpeakerMono ((uint64_t)1 << 19)
#define kSpeakerStereo ((uint64_t)3)
#define kManyInstances 0x7FFFFFFF
#define kUnicodeFactory (1 << 4)

#define NUM_PARAMS 2
#define PARAM_GAIN 0
#define PARAM_WAVE 1
#define MAX_VOICES 16
#define MAX_EVENTS 1024
#define MAX_POINTS 256

/* -------------------------------------------------------------------------------------------- structs */
typedef struct {
    char vendor[64];
    char url[256];
    char email[128];
    int32_t flags;
} PFactoryInfo;

typedef struct {
    uint8_t cid[16];
    int32_t cardinality;
    char category[32];
    char name[64];
} PClassInfo;

typedef struct {
    uint8_t cid[16];
    int32_t cardinality;
    char category[32];
    char name[64];
    uint32_t classFlags;
    char subCategories[128];
    char vendor[64];
    char version[64];
    char sdkVersion[64];
} PClassInfo2;

typedef struct {
    uint8_t cid[16];
    int32_t cardinality;
    char category[32];
    uint16_t name[64];
    uint32_t classFlags;
    char subCategories[128];
    uint16_t vendor[64];
    uint16_t version[64];
    uint16_t sdkVersion[64];
} PClassInfoW;

typedef struct {
    int32_t mediaType;
    int32_t direction;
    int32_t channelCount;
    uint16_t name[128];
    int32_t busType;
    uint32_t flags;
} BusInfo;

typedef struct {
    uint32_t id;
    uint16_t title[128];
    uint16_t shortTitle[128];
    uint16_t units[128];
    int32_t stepCount;
    double defaultNormalizedValue;
    int32_t unitId;
    int32_t flags;
} ParameterInfo;

typedef struct {
    int32_t processMode;
    int32_t symbolicSampleSize;
    int32_t maxSamplesPerBlock;
    double sampleRate;
} ProcessSetup;

typedef struct {
    int32_t numChannels;
    uint64_t silenceFlags;
    float **channelBuffers32;
} AudioBusBuffers;

typedef struct {
    int32_t processMode;
    int32_t symbolicSampleSize;
    int32_t numSamples;
    int32_t numInputs;
    int32_t numOutputs;
    AudioBusBuffers *inputs;
    AudioBusBuffers *outputs;
    void *inputParameterChanges;
    void *outputParameterChanges;
    void *inputEvents;
    void *outputEvents;
    void *processContext;
} ProcessData;

typedef struct {
    int16_t channel;
    int16_t pitch;
    float tuning;
    float velocity;
    int32_t length;
    int32_t noteId;
} NoteOnEvent;

typedef struct {
    int16_t channel;
    int16_t pitch;
    float velocity;
    int32_t noteId;
    float tuning;
} NoteOffEvent;

typedef struct {
    int32_t busIndex;
    int32_t sampleOffset;
    double ppqPosition;
    uint16_t flags;
    uint16_t type;
    union {
        NoteOnEvent noteOn;
        NoteOffEvent noteOff;
        uint64_t space[3];
    } u;
} Event;

_Static_assert(sizeof(ParameterInfo) == 792, "ParameterInfo layout");
_Static_assert(sizeof(ProcessData) == 80, "ProcessData layout");
_Static_assert(sizeof(AudioBusBuffers) == 24, "AudioBusBuffers layout");
_Static_assert(sizeof(Event) == 48, "Event layout");
_Static_assert(offsetof(Event, u) == 24, "Event layout");

/* ------------------------------------------------------------------------------ host interfaces we call */
#define FUNKNOWN_METHODS(T)                                         \
    tresult (*queryInterface)(T * self, const uint8_t *iid, void **obj); \
    uint32_t (*addRef)(T * self);                                   \
    uint32_t (*release)(T * self)

typedef struct IBStream IBStream;
typedef struct {
    FUNKNOWN_METHODS(IBStream);
    tresult (*read)(IBStream *self, void *buffer, int32_t numBytes, int32_t *numBytesRead);
    tresult (*write)(IBStream *self, void *buffer, int32_t numBytes, int32_t *numBytesWritten);
    tresult (*seek)(IBStream *self, int64_t pos, int32_t mode, int64_t *result);
    tresult (*tell)(IBStream *self, int64_t *pos);
} IBStreamVtbl;
struct IBStream {
    const IBStreamVtbl *v;
};

typedef struct IParamValueQueue IParamValueQueue;
typedef struct {
    FUNKNOWN_METHODS(IParamValueQueue);
    uint32_t (*getParameterId)(IParamValueQueue *self);
    int32_t (*getPointCount)(IParamValueQueue *self);
    tresult (*getPoint)(IParamValueQueue *self, int32_t index, int32_t *sampleOffset, double *value);
    tresult (*addPoint)(IParamValueQueue *self, int32_t sampleOffset, double value, int32_t *index);
} IParamValueQueueVtbl;
struct IParamValueQueue {
    const IParamValueQueueVtbl *v;
};

typedef struct IParameterChanges IParameterChanges;
typedef struct {
    FUNKNOWN_METHODS(IParameterChanges);
    int32_t (*getParameterCount)(IParameterChanges *self);
    IParamValueQueue *(*getParameterData)(IParameterChanges *self, int32_t index);
    IParamValueQueue *(*addParameterData)(IParameterChanges *self, const uint32_t *id, int32_t *index);
} IParameterChangesVtbl;
struct IParameterChanges {
    const IParameterChangesVtbl *v;
};

typedef struct IEventList IEventList;
typedef struct {
    FUNKNOWN_METHODS(IEventList);
    int32_t (*getEventCount)(IEventList *self);
    tresult (*getEvent)(IEventList *self, int32_t index, Event *e);
    tresult (*addEvent)(IEventList *self, Event *e);
} IEventListVtbl;
struct IEventList {
    const IEventListVtbl *v;
};

/* ------------------------------------------------------------------------------------------ the synth */
typedef struct {
    int active;
    int16_t channel;
    int16_t pitch;
    int32_t note_id;
    double phase; /* in cycles, [0, 1) */
    double inc;   /* cycles per sample */
    double level; /* velocity */
} Voice;

typedef struct ComponentVtbl ComponentVtbl;
typedef struct ProcessorVtbl ProcessorVtbl;
typedef struct ControllerVtbl ControllerVtbl;

typedef struct MidiMappingVtbl MidiMappingVtbl;

typedef struct Synth {
    const ComponentVtbl *component; /* FUnknown, IPluginBase, IComponent */
    const ProcessorVtbl *processor; /* IAudioProcessor */
    const ControllerVtbl *controller; /* IEditController */
    const MidiMappingVtbl *midi_mapping; /* IMidiMapping */
    int32_t refs;
    double sample_rate;
    uint64_t out_arrangement;
    double proc_params[NUM_PARAMS]; /* what process() uses */
    double ctrl_params[NUM_PARAMS]; /* what the controller reports */
    Voice voices[MAX_VOICES];
    void *component_handler;
} Synth;

#define FROM(ptr, field) ((Synth *)((char *)(ptr) - offsetof(Synth, field)))

static const double DEFAULTS[NUM_PARAMS] = {0.5, 0.0};

static int iid_eq(const uint8_t *a, const uint8_t *b) { return a && memcmp(a, b, 16) == 0; }

static void ascii_to_u16(uint16_t *out, const char *text, size_t capacity) {
    size_t i = 0;
    for (; text[i] && i + 1 < capacity; i++) out[i] = (uint8_t)text[i];
    out[i] = 0;
}

static double clamp01(double v) { return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v); }

/* --- FUnknown, shared by the three interfaces */
static tresult synth_query(Synth *s, const uint8_t *iid, void **obj);

static uint32_t synth_add_ref(Synth *s) { return (uint32_t)++s->refs; }

static uint32_t synth_release(Synth *s) {
    int32_t refs = --s->refs;
    if (refs <= 0) {
        free(s);
        return 0;
    }
    return (uint32_t)refs;
}

/* --- the sound */
static void all_notes_off(Synth *s) { memset(s->voices, 0, sizeof s->voices); }

static void note_on(Synth *s, const NoteOnEvent *e) {
    Voice *v = NULL;
    for (int i = 0; i < MAX_VOICES && !v; i++)
        if (!s->voices[i].active) v = &s->voices[i];
    if (!v) v = &s->voices[0]; /* steal */
    double hz = 440.0 * pow(2.0, (e->pitch - 69) / 12.0 + e->tuning / 1200.0);
    v->active = 1;
    v->channel = e->channel;
    v->pitch = e->pitch;
    v->note_id = e->noteId;
    v->phase = 0.0;
    v->inc = hz / (s->sample_rate > 0 ? s->sample_rate : 44100.0);
    v->level = e->velocity;
}

static void note_off(Synth *s, const NoteOffEvent *e) {
    for (int i = 0; i < MAX_VOICES; i++) {
        Voice *v = &s->voices[i];
        if (!v->active) continue;
        if (e->noteId != -1 ? v->note_id == e->noteId : (v->pitch == e->pitch && v->channel == e->channel))
            v->active = 0;
    }
}

static float render_sample(Synth *s) {
    const int saw = s->proc_params[PARAM_WAVE] >= 0.5;
    double sum = 0.0;
    for (int i = 0; i < MAX_VOICES; i++) {
        Voice *v = &s->voices[i];
        if (!v->active) continue;
        double wave = saw ? 1.0 - 2.0 * v->phase : cos(6.283185307179586 * v->phase);
        sum += v->level * wave;
        v->phase += v->inc;
        v->phase -= floor(v->phase);
    }
    return (float)(sum * s->proc_params[PARAM_GAIN]);
}

typedef struct {
    int32_t offset;
    uint32_t id;
    double value;
} Point;

static int32_t clamp_offset(int32_t offset, int32_t n) { return offset < 0 ? 0 : (offset >= n ? (n > 0 ? n - 1 : 0) : offset); }

/* --------------------------------------------------------------------------------------- IComponent */
struct ComponentVtbl {
    tresult (*queryInterface)(void *self, const uint8_t *iid, void **obj);
    uint32_t (*addRef)(void *self);
    uint32_t (*release)(void *self);
    tresult (*initialize)(void *self, void *context);
    tresult (*terminate)(void *self);
    tresult (*getControllerClassId)(void *self, uint8_t *cid);
    tresult (*setIoMode)(void *self, int32_t mode);
    int32_t (*getBusCount)(void *self, int32_t type, int32_t dir);
    tresult (*getBusInfo)(void *self, int32_t type, int32_t dir, int32_t index, BusInfo *bus);
    tresult (*getRoutingInfo)(void *self, void *in, void *out);
    tresult (*activateBus)(void *self, int32_t type, int32_t dir, int32_t index, uint8_t state);
    tresult (*setActive)(void *self, uint8_t state);
    tresult (*setState)(void *self, IBStream *state);
    tresult (*getState)(void *self, IBStream *state);
};

static tresult c_query(void *self, const uint8_t *iid, void **obj) { return synth_query(FROM(self, component), iid, obj); }
static uint32_t c_add_ref(void *self) { return synth_add_ref(FROM(self, component)); }
static uint32_t c_release(void *self) { return synth_release(FROM(self, component)); }
static tresult c_initialize(void *self, void *context) {
    (void)self;
    (void)context;
    return kResultOk;
}
static tresult c_terminate(void *self) {
    (void)self;
    return kResultOk;
}
static tresult c_get_controller_class_id(void *self, uint8_t *cid) {
    (void)self;
    (void)cid;
    return kResultFalse; /* the component is its own controller */
}
static tresult c_set_io_mode(void *self, int32_t mode) {
    (void)self;
    (void)mode;
    return kResultOk;
}
static int32_t c_get_bus_count(void *self, int32_t type, int32_t dir) {
    (void)self;
    return (type == kAudio && dir == kOutput) || (type == kEvent && dir == kInput) ? 1 : 0;
}
static tresult c_get_bus_info(void *self, int32_t type, int32_t dir, int32_t index, BusInfo *bus) {
    Synth *s = FROM(self, component);
    if (!bus || index != 0 || c_get_bus_count(self, type, dir) != 1) return kInvalidArgument;
    memset(bus, 0, sizeof *bus);
    bus->mediaType = type;
    bus->direction = dir;
    bus->busType = kMain;
    bus->flags = kDefaultActive;
    if (type == kAudio) {
        bus->channelCount = s->out_arrangement == kSpeakerMono ? 1 : 2;
        ascii_to_u16(bus->name, "Output", 128);
    } else {
        bus->channelCount = 16;
        ascii_to_u16(bus->name, "MIDI In", 128);
    }
    return kResultOk;
}
static tresult c_get_routing_info(void *self, void *in, void *out) {
    (void)self;
    (void)in;
    (void)out;
    return kNotImplemented;
}
static tresult c_activate_bus(void *self, int32_t type, int32_t dir, int32_t index, uint8_t state) {
    (void)self;
    (void)state;
    return index == 0 && c_get_bus_count(self, type, dir) == 1 ? kResultOk : kInvalidArgument;
}
static tresult c_set_active(void *self, uint8_t state) {
    (void)state;
    all_notes_off(FROM(self, component));
    return kResultOk;
}

static const char STATE_MAGIC[4] = {'S', 'B', 'S', 'Y'};
#define STATE_SIZE (4 + 4 + 8 * NUM_PARAMS)

static tresult c_set_state(void *self, IBStream *stream) {
    Synth *s = FROM(self, component);
    uint8_t buf[STATE_SIZE];
    int32_t got = 0;
    if (!stream || stream->v->read(stream, buf, STATE_SIZE, &got) != kResultOk || got != STATE_SIZE)
        return kResultFalse;
    uint32_t version;
    memcpy(&version, buf + 4, 4);
    if (memcmp(buf, STATE_MAGIC, 4) != 0 || version != 1) return kResultFalse;
    for (int i = 0; i < NUM_PARAMS; i++) {
        double v;
        memcpy(&v, buf + 8 + 8 * i, 8);
        if (!(v >= 0.0 && v <= 1.0)) return kResultFalse;
        s->proc_params[i] = s->ctrl_params[i] = v;
    }
    return kResultOk;
}
static tresult c_get_state(void *self, IBStream *stream) {
    Synth *s = FROM(self, component);
    uint8_t buf[STATE_SIZE];
    uint32_t version = 1;
    int32_t written = 0;
    memcpy(buf, STATE_MAGIC, 4);
    memcpy(buf + 4, &version, 4);
    memcpy(buf + 8, s->proc_params, 8 * NUM_PARAMS);
    if (!stream || stream->v->write(stream, buf, STATE_SIZE, &written) != kResultOk || written != STATE_SIZE)
        return kResultFalse;
    return kResultOk;
}

static const ComponentVtbl COMPONENT_VTBL = {
    c_query, c_add_ref, c_release, c_initialize, c_terminate, c_get_controller_class_id, c_set_io_mode,
    c_get_bus_count, c_get_bus_info, c_get_routing_info, c_activate_bus, c_set_active, c_set_state, c_get_state,
};

/* ---------------------------------------------------------------------------------- IAudioProcessor */
struct ProcessorVtbl {
    tresult (*queryInterface)(void *self, const uint8_t *iid, void **obj);
    uint32_t (*addRef)(void *self);
    uint32_t (*release)(void *self);
    tresult (*setBusArrangements)(void *self, uint64_t *inputs, int32_t numIns, uint64_t *outputs, int32_t numOuts);
    tresult (*getBusArrangement)(void *self, int32_t dir, int32_t index, uint64_t *arr);
    tresult (*canProcessSampleSize)(void *self, int32_t symbolicSampleSize);
    uint32_t (*getLatencySamples)(void *self);
    tresult (*setupProcessing)(void *self, ProcessSetup *setup);
    tresult (*setProcessing)(void *self, uint8_t state);
    tresult (*process)(void *self, ProcessData *data);
    uint32_t (*getTailSamples)(void *self);
};

static tresult p_query(void *self, const uint8_t *iid, void **obj) { return synth_query(FROM(self, processor), iid, obj); }
static uint32_t p_add_ref(void *self) { return synth_add_ref(FROM(self, processor)); }
static uint32_t p_release(void *self) { return synth_release(FROM(self, processor)); }
static tresult p_set_bus_arrangements(void *self, uint64_t *inputs, int32_t numIns, uint64_t *outputs, int32_t numOuts) {
    Synth *s = FROM(self, processor);
    (void)inputs;
    if (numIns != 0 || numOuts != 1 || !outputs) return kResultFalse;
    if (outputs[0] != kSpeakerMono && outputs[0] != kSpeakerStereo) return kResultFalse;
    s->out_arrangement = outputs[0];
    return kResultOk;
}
static tresult p_get_bus_arrangement(void *self, int32_t dir, int32_t index, uint64_t *arr) {
    Synth *s = FROM(self, processor);
    if (dir != kOutput || index != 0 || !arr) return kInvalidArgument;
    *arr = s->out_arrangement;
    return kResultOk;
}
static tresult p_can_process_sample_size(void *self, int32_t size) {
    (void)self;
    return size == kSample32 ? kResultOk : kResultFalse;
}
static uint32_t p_get_latency_samples(void *self) {
    (void)self;
    return 0;
}
static tresult p_setup_processing(void *self, ProcessSetup *setup) {
    Synth *s = FROM(self, processor);
    if (!setup || setup->symbolicSampleSize != kSample32 || !(setup->sampleRate > 0)) return kResultFalse;
    s->sample_rate = setup->sampleRate;
    return kResultOk;
}
static tresult p_set_processing(void *self, uint8_t state) {
    (void)self;
    (void)state;
    return kResultOk;
}

/* a stable insertion sort keeps same-offset items in the order the host gave them */
static void sort_points(Point *p, int n) {
    for (int i = 1; i < n; i++) {
        Point x = p[i];
        int j = i - 1;
        for (; j >= 0 && p[j].offset > x.offset; j--) p[j + 1] = p[j];
        p[j + 1] = x;
    }
}
static void sort_events(Event *e, int n) {
    for (int i = 1; i < n; i++) {
        Event x = e[i];
        int j = i - 1;
        for (; j >= 0 && e[j].sampleOffset > x.sampleOffset; j--) e[j + 1] = e[j];
        e[j + 1] = x;
    }
}

static tresult p_process(void *self, ProcessData *data) {
    Synth *s = FROM(self, processor);
    static __thread Point points[MAX_POINTS];
    static __thread Event events[MAX_EVENTS];
    int num_points = 0, num_events = 0;
    const int32_t n = data->numSamples;

    IParameterChanges *changes = (IParameterChanges *)data->inputParameterChanges;
    if (changes) {
        int32_t count = changes->v->getParameterCount(changes);
        for (int32_t i = 0; i < count; i++) {
            IParamValueQueue *q = changes->v->getParameterData(changes, i);
            if (!q) continue;
            uint32_t id = q->v->getParameterId(q);
            int32_t np = q->v->getPointCount(q);
            for (int32_t k = 0; k < np && num_points < MAX_POINTS; k++) {
                int32_t offset = 0;
                double value = 0.0;
                if (q->v->getPoint(q, k, &offset, &value) != kResultOk || id >= NUM_PARAMS) continue;
                points[num_points++] = (Point){clamp_offset(offset, n), id, clamp01(value)};
            }
        }
    }
    IEventList *list = (IEventList *)data->inputEvents;
    if (list) {
        int32_t count = list->v->getEventCount(list);
        for (int32_t i = 0; i < count && num_events < MAX_EVENTS; i++) {
            Event e;
            if (list->v->getEvent(list, i, &e) != kResultOk) continue;
            if (e.busIndex != 0 || (e.type != kNoteOnEvent && e.type != kNoteOffEvent)) continue;
            e.sampleOffset = clamp_offset(e.sampleOffset, n);
            events[num_events++] = e;
        }
    }
    sort_points(points, num_points);
    sort_events(events, num_events);

    float **out = NULL;
    int32_t channels = 0;
    if (data->numOutputs >= 1 && data->outputs) {
        out = data->outputs[0].channelBuffers32;
        channels = data->outputs[0].numChannels;
        data->outputs[0].silenceFlags = 0;
    }
    int pi = 0, ei = 0;
    for (int32_t i = 0; i < n; i++) {
        for (; pi < num_points && points[pi].offset <= i; pi++) s->proc_params[points[pi].id] = points[pi].value;
        for (; ei < num_events && events[ei].sampleOffset <= i; ei++) {
            if (events[ei].type == kNoteOnEvent && events[ei].u.noteOn.velocity > 0)
                note_on(s, &events[ei].u.noteOn);
            else if (events[ei].type == kNoteOnEvent)
                note_off(s, &(NoteOffEvent){events[ei].u.noteOn.channel, events[ei].u.noteOn.pitch, 0, -1, 0});
            else
                note_off(s, &events[ei].u.noteOff);
        }
        float x = render_sample(s);
        for (int32_t c = 0; c < channels; c++)
            if (out && out[c]) out[c][i] = x;
    }
    for (; pi < num_points; pi++) s->proc_params[points[pi].id] = points[pi].value; /* numSamples == 0: a flush */
    return kResultOk;
}
static uint32_t p_get_tail_samples(void *self) {
    (void)self;
    return 0;
}

static const ProcessorVtbl PROCESSOR_VTBL = {
    p_query, p_add_ref, p_release, p_set_bus_arrangements, p_get_bus_arrangement, p_can_process_sample_size,
    p_get_latency_samples, p_setup_processing, p_set_processing, p_process, p_get_tail_samples,
};

/* ---------------------------------------------------------------------------------- IEditController */
struct ControllerVtbl {
    tresult (*queryInterface)(void *self, const uint8_t *iid, void **obj);
    uint32_t (*addRef)(void *self);
    uint32_t (*release)(void *self);
    tresult (*initialize)(void *self, void *context);
    tresult (*terminate)(void *self);
    tresult (*setComponentState)(void *self, IBStream *state);
    tresult (*setState)(void *self, IBStream *state);
    tresult (*getState)(void *self, IBStream *state);
    int32_t (*getParameterCount)(void *self);
    tresult (*getParameterInfo)(void *self, int32_t index, ParameterInfo *info);
    tresult (*getParamStringByValue)(void *self, uint32_t id, double value, uint16_t *string);
    tresult (*getParamValueByString)(void *self, uint32_t id, const uint16_t *string, double *value);
    double (*normalizedParamToPlain)(void *self, uint32_t id, double value);
    double (*plainParamToNormalized)(void *self, uint32_t id, double plain);
    double (*getParamNormalized)(void *self, uint32_t id);
    tresult (*setParamNormalized)(void *self, uint32_t id, double value);
    tresult (*setComponentHandler)(void *self, void *handler);
    void *(*createView)(void *self, const char *name);
};

static tresult e_query(void *self, const uint8_t *iid, void **obj) { return synth_query(FROM(self, controller), iid, obj); }
static uint32_t e_add_ref(void *self) { return synth_add_ref(FROM(self, controller)); }
static uint32_t e_release(void *self) { return synth_release(FROM(self, controller)); }
static tresult e_set_component_state(void *self, IBStream *stream) {
    Synth *s = FROM(self, controller);
    double saved[NUM_PARAMS];
    memcpy(saved, s->proc_params, sizeof saved);
    tresult result = c_set_state(&s->component, stream); /* sets both copies */
    memcpy(s->proc_params, saved, sizeof saved);          /* ...but this call is for the controller only */
    return result;
}
static tresult e_set_state(void *self, IBStream *stream) {
    (void)self;
    (void)stream;
    return kResultOk; /* the controller has no state of its own */
}
static tresult e_get_state(void *self, IBStream *stream) {
    (void)self;
    (void)stream;
    return kResultOk;
}
static int32_t e_get_parameter_count(void *self) {
    (void)self;
    return NUM_PARAMS;
}
static tresult e_get_parameter_info(void *self, int32_t index, ParameterInfo *info) {
    (void)self;
    if (!info || index < 0 || index >= NUM_PARAMS) return kInvalidArgument;
    memset(info, 0, sizeof *info);
    info->id = (uint32_t)index;
    info->defaultNormalizedValue = DEFAULTS[index];
    info->flags = kCanAutomate;
    if (index == PARAM_GAIN) {
        ascii_to_u16(info->title, "Gain", 128);
        ascii_to_u16(info->shortTitle, "Gain", 128);
    } else {
        ascii_to_u16(info->title, "Waveform", 128);
        ascii_to_u16(info->shortTitle, "Wave", 128);
        info->stepCount = 1;
        info->flags |= kIsList;
    }
    return kResultOk;
}
static tresult e_get_param_string_by_value(void *self, uint32_t id, double value, uint16_t *string) {
    (void)self;
    char text[32];
    if (!string || id >= NUM_PARAMS) return kInvalidArgument;
    if (id == PARAM_GAIN)
        snprintf(text, sizeof text, "%.2f", clamp01(value));
    else
        snprintf(text, sizeof text, "%s", value >= 0.5 ? "Saw" : "Sine");
    ascii_to_u16(string, text, 128);
    return kResultOk;
}
static tresult e_get_param_value_by_string(void *self, uint32_t id, const uint16_t *string, double *value) {
    (void)self;
    char text[64];
    size_t i = 0;
    if (!string || !value || id >= NUM_PARAMS) return kInvalidArgument;
    for (; string[i] && i + 1 < sizeof text; i++) {
        if (string[i] > 127) return kResultFalse;
        text[i] = (char)string[i];
    }
    text[i] = 0;
    if (id == PARAM_WAVE) {
        if (strcmp(text, "Sine") == 0) *value = 0.0;
        else if (strcmp(text, "Saw") == 0) *value = 1.0;
        else return kResultFalse;
        return kResultOk;
    }
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != 0 || !(v >= 0.0 && v <= 1.0)) return kResultFalse;
    *value = v;
    return kResultOk;
}
static double e_normalized_param_to_plain(void *self, uint32_t id, double value) {
    (void)self;
    return id == PARAM_WAVE ? (value >= 0.5 ? 1.0 : 0.0) : clamp01(value);
}
static double e_plain_param_to_normalized(void *self, uint32_t id, double plain) {
    (void)self;
    (void)id;
    return clamp01(plain);
}
static double e_get_param_normalized(void *self, uint32_t id) {
    Synth *s = FROM(self, controller);
    return id < NUM_PARAMS ? s->ctrl_params[id] : 0.0;
}
static tresult e_set_param_normalized(void *self, uint32_t id, double value) {
    Synth *s = FROM(self, controller);
    if (id >= NUM_PARAMS) return kInvalidArgument;
    s->ctrl_params[id] = clamp01(value);
    return kResultOk;
}
static tresult e_set_component_handler(void *self, void *handler) {
    FROM(self, controller)->component_handler = handler;
    return kResultOk;
}
static void *e_create_view(void *self, const char *name);

static const ControllerVtbl CONTROLLER_VTBL = {
    e_query, e_add_ref, e_release, c_initialize, c_terminate, e_set_component_state, e_set_state, e_get_state,
    e_get_parameter_count, e_get_parameter_info, e_get_param_string_by_value, e_get_param_value_by_string,
    e_normalized_param_to_plain, e_plain_param_to_normalized, e_get_param_normalized, e_set_param_normalized,
    e_set_component_handler, e_create_view,
};

/* ------------------------------------------------------------------------------------- IMidiMapping */
struct MidiMappingVtbl {
    tresult (*queryInterface)(void *self, const uint8_t *iid, void **obj);
    uint32_t (*addRef)(void *self);
    uint32_t (*release)(void *self);
    tresult (*getMidiControllerAssignment)(void *self, int32_t busIndex, int16_t channel, int16_t controller,
                                           uint32_t *id);
};

static tresult m_query(void *self, const uint8_t *iid, void **obj) { return synth_query(FROM(self, midi_mapping), iid, obj); }
static uint32_t m_add_ref(void *self) { return synth_add_ref(FROM(self, midi_mapping)); }
static uint32_t m_release(void *self) { return synth_release(FROM(self, midi_mapping)); }
static tresult m_get_midi_controller_assignment(void *self, int32_t bus, int16_t channel, int16_t controller,
                                                uint32_t *id) {
    (void)self;
    (void)channel;
    if (bus != 0 || controller != 7 || !id) return kResultFalse;
    *id = PARAM_GAIN;
    return kResultOk;
}

static const MidiMappingVtbl MIDI_MAPPING_VTBL = {m_query, m_add_ref, m_release, m_get_midi_controller_assignment};

static tresult synth_query(Synth *s, const uint8_t *iid, void **obj) {
    if (!obj) return kInvalidArgument;
    void *found = NULL;
    if (iid_eq(iid, FUNKNOWN_IID) || iid_eq(iid, IPLUGINBASE_IID) || iid_eq(iid, ICOMPONENT_IID))
        found = &s->component;
    else if (iid_eq(iid, IAUDIOPROCESSOR_IID))
        found = &s->processor;
    else if (iid_eq(iid, IEDITCONTROLLER_IID))
        found = &s->controller;
    else if (iid_eq(iid, IMIDIMAPPING_IID))
        found = &s->midi_mapping;
    *obj = found;
    if (!found) return kNoInterface;
    s->refs++;
    return kResultOk;
}

static Synth *synth_new(void) {
    Synth *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->component = &COMPONENT_VTBL;
    s->processor = &PROCESSOR_VTBL;
    s->controller = &CONTROLLER_VTBL;
    s->midi_mapping = &MIDI_MAPPING_VTBL;
    s->refs = 1;
    s->sample_rate = 44100.0;
    s->out_arrangement = kSpeakerStereo;
    memcpy(s->proc_params, DEFAULTS, sizeof DEFAULTS);
    memcpy(s->ctrl_params, DEFAULTS, sizeof DEFAULTS);
    return s;
}

/* ------------------------------------------------------------------------------------------ the editor */
#ifdef SYNTH_EDITOR
#include "editor.h"
#else
static void *e_create_view(void *self, const char *name) {
    (void)self;
    (void)name;
    return NULL; /* no editor */
}
#endif

/* ----------------------------------------------------------------------------------------- the factory */
typedef struct {
    const struct FactoryVtbl *v;
} Factory;

struct FactoryVtbl {
    tresult (*queryInterface)(Factory *self, const uint8_t *iid, void **obj);
    uint32_t (*addRef)(Factory *self);
    uint32_t (*release)(Factory *self);
    tresult (*getFactoryInfo)(Factory *self, PFactoryInfo *info);
    int32_t (*countClasses)(Factory *self);
    tresult (*getClassInfo)(Factory *self, int32_t index, PClassInfo *info);
    tresult (*createInstance)(Factory *self, const uint8_t *cid, const uint8_t *iid, void **obj);
    tresult (*getClassInfo2)(Factory *self, int32_t index, PClassInfo2 *info);
    tresult (*getClassInfoUnicode)(Factory *self, int32_t index, PClassInfoW *info);
    tresult (*setHostContext)(Factory *self, void *context);
};

#define VENDOR "stompbox tests"
#define NAME "StompboxTestSynth"
#define CATEGORY "Audio Module Class"
#define SUBCATEGORIES "Instrument|Synth"
#define VERSION "1.0.0"
#define SDK_VERSION "VST 3.7.0"

static tresult f_query(Factory *self, const uint8_t *iid, void **obj) {
    if (!obj) return kInvalidArgument;
    if (iid_eq(iid, FUNKNOWN_IID) || iid_eq(iid, IPLUGINFACTORY_IID) || iid_eq(iid, IPLUGINFACTORY2_IID) ||
        iid_eq(iid, IPLUGINFACTORY3_IID)) {
        *obj = self;
        return kResultOk;
    }
    *obj = NULL;
    return kNoInterface;
}
static uint32_t f_add_ref(Factory *self) {
    (void)self;
    return 1; /* static object */
}
static uint32_t f_release(Factory *self) {
    (void)self;
    return 1;
}
static tresult f_get_factory_info(Factory *self, PFactoryInfo *info) {
    (void)self;
    if (!info) return kInvalidArgument;
    memset(info, 0, sizeof *info);
    strcpy(info->vendor, VENDOR);
    info->flags = kUnicodeFactory;
    return kResultOk;
}
static int32_t f_count_classes(Factory *self) {
    (void)self;
    return 1;
}
static tresult f_get_class_info(Factory *self, int32_t index, PClassInfo *info) {
    (void)self;
    if (index != 0 || !info) return kInvalidArgument;
    memset(info, 0, sizeof *info);
    memcpy(info->cid, SYNTH_CID, 16);
    info->cardinality = kManyInstances;
    strcpy(info->category, CATEGORY);
    strcpy(info->name, NAME);
    return kResultOk;
}
static tresult f_get_class_info2(Factory *self, int32_t index, PClassInfo2 *info) {
    (void)self;
    if (index != 0 || !info) return kInvalidArgument;
    memset(info, 0, sizeof *info);
    memcpy(info->cid, SYNTH_CID, 16);
    info->cardinality = kManyInstances;
    strcpy(info->category, CATEGORY);
    strcpy(info->name, NAME);
    strcpy(info->subCategories, SUBCATEGORIES);
    strcpy(info->vendor, VENDOR);
    strcpy(info->version, VERSION);
    strcpy(info->sdkVersion, SDK_VERSION);
    return kResultOk;
}
static tresult f_get_class_info_unicode(Factory *self, int32_t index, PClassInfoW *info) {
    (void)self;
    if (index != 0 || !info) return kInvalidArgument;
    memset(info, 0, sizeof *info);
    memcpy(info->cid, SYNTH_CID, 16);
    info->cardinality = kManyInstances;
    strcpy(info->category, CATEGORY);
    ascii_to_u16(info->name, NAME, 64);
    strcpy(info->subCategories, SUBCATEGORIES);
    ascii_to_u16(info->vendor, VENDOR, 64);
    ascii_to_u16(info->version, VERSION, 64);
    ascii_to_u16(info->sdkVersion, SDK_VERSION, 64);
    return kResultOk;
}
static tresult f_create_instance(Factory *self, const uint8_t *cid, const uint8_t *iid, void **obj) {
    (void)self;
    if (!obj) return kInvalidArgument;
    *obj = NULL;
    if (!iid_eq(cid, SYNTH_CID)) return kNoInterface;
    Synth *s = synth_new();
    if (!s) return kResultFalse;
    tresult result = synth_query(s, iid, obj);
    synth_release(s); /* the caller holds the reference queryInterface added */
    return result;
}
static tresult f_set_host_context(Factory *self, void *context) {
    (void)self;
    (void)context;
    return kResultOk;
}

static const struct FactoryVtbl FACTORY_VTBL = {
    f_query, f_add_ref, f_release, f_get_factory_info, f_count_classes, f_get_class_info, f_create_instance,
    f_get_class_info2, f_get_class_info_unicode, f_set_host_context,
};
static Factory FACTORY = {&FACTORY_VTBL};

EXPORT void *GetPluginFactory(void) { return &FACTORY; }
EXPORT _Bool ModuleEntry(void *handle) {
    (void)handle;
    return 1;
}
EXPORT _Bool ModuleExit(void) { return 1; }
