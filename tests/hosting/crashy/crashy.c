/* A deliberately misbehaving LADSPA plugin for the crash-isolation tests (MIT, part of stompbox's tests).
 *
 * Label "crashy", one control input "Mode" and one audio input and output. run() copies the input to the
 * output times "Gain", then misbehaves according to Mode: 0 nothing, 1 segfault, 2 abort(), 3 hang (spin
 * forever), 4 exit(3). Built by the test fixture: cc -shared -fPIC -o crashy.so crashy.c
 */
#include <stdlib.h>
#include <string.h>

typedef float LADSPA_Data;
typedef void *LADSPA_Handle;
typedef struct { int HintDescriptor; LADSPA_Data LowerBound; LADSPA_Data UpperBound; } LADSPA_PortRangeHint;

typedef struct _LADSPA_Descriptor {
    unsigned long UniqueID;
    const char *Label;
    int Properties;
    const char *Name;
    const char *Maker;
    const char *Copyright;
    unsigned long PortCount;
    const int *PortDescriptors;
    const char *const *PortNames;
    const LADSPA_PortRangeHint *PortRangeHints;
    void *ImplementationData;
    LADSPA_Handle (*instantiate)(const struct _LADSPA_Descriptor *, unsigned long);
    void (*connect_port)(LADSPA_Handle, unsigned long, LADSPA_Data *);
    void (*activate)(LADSPA_Handle);
    void (*run)(LADSPA_Handle, unsigned long);
    void (*run_adding)(LADSPA_Handle, unsigned long);
    void (*set_run_adding_gain)(LADSPA_Handle, LADSPA_Data);
    void (*deactivate)(LADSPA_Handle);
    void (*cleanup)(LADSPA_Handle);
} LADSPA_Descriptor;

typedef struct { LADSPA_Data *ports[4]; } Crashy;

static LADSPA_Handle instantiate(const LADSPA_Descriptor *d, unsigned long rate) {
    (void)d; (void)rate;
    return calloc(1, sizeof(Crashy));
}

static void connect_port(LADSPA_Handle h, unsigned long port, LADSPA_Data *data) {
    if (port < 4) ((Crashy *)h)->ports[port] = data;
}

static void run(LADSPA_Handle h, unsigned long n) {
    Crashy *c = (Crashy *)h;
    int mode = (int)(*c->ports[0] + 0.5f);
    LADSPA_Data gain = *c->ports[1];
    for (unsigned long i = 0; i < n; i++) c->ports[3][i] = c->ports[2][i] * gain;
    if (mode == 1) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    } else if (mode == 2) {
        abort();
    } else if (mode == 3) {
        volatile unsigned long spin = 0;
        for (;;) spin++;
    } else if (mode == 4) {
        exit(3);
    }
}

static void cleanup(LADSPA_Handle h) { free(h); }

static const int port_kinds[4] = {0x5, 0x5, 0x9, 0xA}; /* control in, control in, audio in, audio out */
static const char *const port_names[4] = {"Mode", "Gain", "Input", "Output"};
static const LADSPA_PortRangeHint hints[4] = {
    {0x1 | 0x2 | 0x20 | 0x40, 0.0f, 4.0f}, /* bounded, integer, default minimum */
    {0x1 | 0x2 | 0x240, 0.0f, 2.0f},      /* bounded, default 1 */
    {0, 0.0f, 0.0f},
    {0, 0.0f, 0.0f},
};

static const LADSPA_Descriptor descriptor = {
    990001, "crashy", 0, "Crashy test plugin", "stompbox tests", "MIT", 4, port_kinds, port_names, hints, NULL,
    instantiate, connect_port, NULL, run, NULL, NULL, NULL, cleanup,
};

const LADSPA_Descriptor *ladspa_descriptor(unsigned long index) {
    return index == 0 ? &descriptor : NULL;
}
