/*
 * wsbench-count.so: a QEMU TCG plugin (QEMU 7.2, plugin API version 1) that counts
 * the guest instructions of a measured phase, as callgrind's --instr-atstart=no with
 * client requests does on x86-64 (harness/wsbench/gate/qemu.py runs it).
 *
 *   qemu-arm -plugin build/arm/qemu-count/wsbench-count.so,out=FILE PROGRAM ...
 *
 * Counting: every translated block adds its instruction count to one counter when it
 * executes (an inline add, no callback per block), so the counter is the number of
 * guest instructions executed so far (a block counts whole when it starts). A single
 * guest thread is assumed (inline adds are not atomic).
 *
 * The phase: the guest marks it with a syscall whose first two arguments are the
 * magic pair below and whose third is 1 (on) or 0 (off): getpid(2), which ignores its
 * arguments (clients/quickjs-check/check.c, check.count(), in builds without
 * valgrind's callgrind.h). The plugin's syscall callback reads the counter at each
 * mark; the phase's total is the sum of (counter at off - counter at on).
 *
 * FILE: one line, rewritten at every "off" mark and at exit:
 *   wsbench-qemu-count instructions=N phases=P open=O all=A
 * N: instructions counted between the marks; P: completed on/off phases; O: 1 when a
 * phase was switched on and never off (its instructions up to exit are in N); A: every
 * guest instruction of the run.
 */
#include <qemu-plugin.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The marker's arguments (clients/quickjs-check/check.c has the same two). */
#define MARK_A 0x77736263u /* "wsbc" */
#define MARK_B 0x6f756e74u /* "ount" */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t executed;   /* instructions executed so far (inline adds) */
static uint64_t started;    /* `executed` at the last "on" mark */
static uint64_t counted;    /* instructions of the completed phases */
static unsigned phases;     /* completed phases */
static int counting;        /* between an "on" and an "off" mark */
static const char *out_path;

static void write_total(int at_exit)
{
	uint64_t total = counted;
	FILE *f;

	if (counting && at_exit)
		total += executed - started;
	f = fopen(out_path, "w");
	if (!f) {
		fprintf(stderr, "wsbench-count: cannot write %s\n", out_path);
		return;
	}
	fprintf(f, "wsbench-qemu-count instructions=%" PRIu64 " phases=%u open=%d all=%" PRIu64 "\n",
		total, phases, counting && at_exit, executed);
	fclose(f);
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed,
						 qemu_plugin_tb_n_insns(tb));
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1,
		       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
		       uint64_t a7, uint64_t a8)
{
	(void)id;
	(void)vcpu_index;
	(void)num;
	(void)a4;
	(void)a5;
	(void)a6;
	(void)a7;
	(void)a8;
	if ((uint32_t)a1 != MARK_A || (uint32_t)a2 != MARK_B)
		return;
	if (a3 == 1 && !counting) {
		counting = 1;
		started = executed;
	} else if (a3 == 0 && counting) {
		counting = 0;
		counted += executed - started;
		phases++;
		write_total(0);
	}
}

static void at_exit_cb(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	write_total(1);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0 && argv[i][4]) {
			out_path = argv[i] + 4;
		} else {
			fprintf(stderr, "wsbench-count: unknown argument '%s' (expected out=FILE)\n", argv[i]);
			return 1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "wsbench-count: no out=FILE argument\n");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_atexit_cb(id, at_exit_cb, NULL);
	return 0;
}
