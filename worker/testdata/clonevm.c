/* clonevm starts a child that shares its address space with it (clone with CLONE_VM and
 * without CLONE_THREAD), prints the child's pid, and waits for it. The child reads one
 * byte from standard input and then executes argv[1] with the remaining arguments. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char **child_argv;

static int child(void *arg) {
	char c;
	(void)arg;
	if (read(0, &c, 1) != 1)
		_exit(3);
	execv(child_argv[0], child_argv);
	_exit(4);
}

int main(int argc, char **argv) {
	static char stack[256 * 1024];
	int pid, status;
	if (argc < 2)
		return 2;
	child_argv = argv + 1;
	pid = clone(child, stack + sizeof stack, CLONE_VM | SIGCHLD, NULL);
	if (pid < 0) {
		perror("clone");
		return 1;
	}
	printf("%d\n", pid);
	fflush(stdout);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return 0;
}
