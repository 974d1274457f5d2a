#ifndef CHRONIR_CZMQ_SHIM_H
#define CHRONIR_CZMQ_SHIM_H
#include <zmq.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

/* Names the calling thread for the kernel (perf, top -H): at most 15 bytes are kept. */
static inline void chronir_name_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#endif
