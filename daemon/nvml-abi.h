/* nvml-abi.h: the few types and values of NVML's API that benchd uses, as
 * nvml.h (NVML API reference, "Device Structs" and "Device Enums") defines
 * them; nvml.h itself is not needed to build.  daemon/nvml.c calls NVML
 * with them, and tests/helper/nvml-recorded.c answers as NVML with them. */
#ifndef BD_NVML_ABI_H
#define BD_NVML_ABI_H

typedef int nvmlReturn_t;               /* NVML_SUCCESS = 0 */

typedef struct {
        char busIdLegacy[16];
        unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
        char busId[32];
} nvmlPciInfo_t;

typedef struct {
        unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
        unsigned int gpu, memory;
} nvmlUtilization_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_UNKNOWN 999
#define NVML_TEMPERATURE_GPU 0
#define NVML_FEATURE_ENABLED 1
/* nvmlMemoryErrorType_t, nvmlEccCounterType_t, nvmlPageRetirementCause_t,
 * nvmlTemperatureThresholds_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR 1
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1

#endif
