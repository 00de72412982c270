// glibc's malloc tuning (mallopt and its M_* parameters), which the Glibc module does not export.
#include <malloc.h>
