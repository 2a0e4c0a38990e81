/*
** clang_compat.h — forced into every file of the fuzz build (-include). clang 14
** knows fewer feature names in __builtin_cpu_supports than gcc ("f16c",
** "avx512bf16" are errors), so the fuzz build answers "no" for every CPU feature:
** it runs, and fuzzes, the portable C paths. The fuzz build only; never the library.
*/
#define __builtin_cpu_supports(feature) 0
#define __builtin_cpu_init() ((void)0)
/* glibc defines CMPLX only for gcc (>= 4.7); clang has the same builtin */
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#define CMPLXL(x, y) __builtin_complex((long double)(x), (long double)(y))
/* gcc says __SANITIZE_ADDRESS__ under -fsanitize=address, clang says __has_feature: the
** library's AddressSanitizer cases (no header caches, so a leak is reported where it was
** allocated, not where a recycled header was first made) hold in this build too */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1
#endif
#endif
