/* run_program.h — runs a program of the build tree as a person would:
 * `glassbox` for the CLI tests, the helper programs that write stores for
 * the tests that must not link the writer (test_webui_*).
 *
 * Programs are found under GB_BUILD_DIR (set by CTest); run by hand, a
 * test finds the build tree as the parent of its own folder (<build>/tests/). */
#ifndef GB_TEST_RUN_PROGRAM_H
#define GB_TEST_RUN_PROGRAM_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* <build>/<relative> into exe; false (and a message) when it is not built. */
static inline bool build_program_path(const char *relative, char *exe, size_t size) {
    const char *build = getenv("GB_BUILD_DIR");
    char self[400] = "";
    if (!build) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = 0;
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
        strncat(self, "/..", sizeof self - strlen(self) - 1);
        build = self;
    }
    snprintf(exe, size, "%s/%s", build, relative);
    if (access(exe, X_OK) == 0) return true;
    fprintf(stderr, "%s is not built\n", exe);
    return false;
}

/* Runs <build>/<relative> with args (NULL-terminated, at most 30); its
 * stdout and stderr go to the files out_path and err_path (NULL: this
 * process's own). Returns its exit status, or 128 + the signal that
 * killed it (the shell's convention, so a crash never reads as success);
 * -1 when it could not run. No Check assertion inside: usable in main(),
 * before a suite runs. */
static inline int run_program(const char *relative, const char *const *args, const char *out_path,
                              const char *err_path) {
    char exe[512];
    if (!build_program_path(relative, exe, sizeof exe)) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if ((out_path && !freopen(out_path, "w", stdout)) ||
            (err_path && !freopen(err_path, "w", stderr)))
            _exit(99);
        char *argv[32] = {exe};
        for (int i = 0; args[i] && i < 30; i++) argv[i + 1] = (char *)args[i];
        execv(exe, argv);
        _exit(98);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
