/* threadexit starts a thread, prints its thread id, and when a byte arrives on standard
 * input lets the thread exit, prints "exited" once it has been joined, and sleeps. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *run(void *arg) {
	char c;
	(void)arg;
	printf("%d\n", gettid());
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return NULL;
	return NULL;
}

int main(void) {
	pthread_t th;
	if (pthread_create(&th, NULL, run, NULL) != 0)
		return 1;
	pthread_join(th, NULL);
	printf("exited\n");
	fflush(stdout);
	sleep(60);
	return 0;
}
