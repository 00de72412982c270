#ifndef WORKOUTD_CLIBFUZZER_H
#define WORKOUTD_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, for programs that keep their own main (SwiftPM executables do): parses
/// libFuzzer's flags from argc/argv and runs `callback` on each input. Defined by the runtime that
/// `-sanitize=fuzzer` links in; only referenced by builds made with it.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
