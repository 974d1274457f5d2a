#ifndef CHRONIR_CZMQ_SHIM_H
#define CHRONIR_CZMQ_SHIM_H
#include <zmq.h>
#include <sys/eventfd.h>
#endif
