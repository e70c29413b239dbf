/*
 * common/scratch.h - scratch folders a process holds while it uses them, so that the
 * folders of processes that died (SIGKILL, a crash) can be told apart and removed.
 * Internal to the library (not installed); the test harness uses it too.
 *
 * A holder opens its folder and keeps a flock(LOCK_EX) on it for as long as it uses it
 * (forked children share the lock; the kernel drops it when the last holder dies). A
 * folder whose lock can be taken, and which is old enough not to be one made a moment ago
 * and not locked yet, belongs to nobody.
 */
#ifndef FLOE_COMMON_SCRATCH_H
#define FLOE_COMMON_SCRATCH_H

/* Open folder dir and lock it: the descriptor (close it to let go), or -1 with errno. */
int floe_scratch_hold(const char *dir);

/* The folder `name` under the open folder dirfd when nobody holds it: a folder (not a
 * link), of this user, last changed over age_s seconds ago, whose lock this call took.
 * Returns its descriptor (locked; close it when done), or -1 when it is anything else. */
int floe_scratch_take_stale(int dirfd, const char *name, int age_s);

#endif
