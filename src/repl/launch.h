/*
** launch.h — `lutorch --nproc N script.lua`: start N ranks through mpirun.
** Program-only code (src/repl is linked into the lutorch program, not the library).
*/
#ifndef LT_LAUNCH_H
#define LT_LAUNCH_H

/* Replace this process with `mpirun -np nproc <this program> <argv[1..] without --nproc N>`,
** adding --allow-run-as-root when running as root and --oversubscribe when nproc exceeds
** the cores this process may use. script_index is the index of the script in argv (0:
** none, an error). LUTORCH_MPIRUN names another launcher. Returns only on failure (-1,
** after printing why). */
int lt_launch_nproc(int nproc, int argc, char **argv, int script_index);

/* the mpirun command line lt_launch_nproc would run (NULL-terminated, malloc'd; free the
** array only), or NULL with a message in err */
char **lt_launch_argv(int nproc, int argc, char **argv, int script_index, char *err, int errlen);

#endif
