// Headers only (include/CEpoll.h); a C target needs one source file.
#include "CEpoll.h"
