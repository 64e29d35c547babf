/*
 * wsbench_check.so: the echo checks of clients/workload/verify.js for qjs, in C.
 *
 * The shared workload verifies every echo (clients/README.md, "Verification").
 * In V8 and JavaScriptCore reading the first bytes of an ArrayBuffer through a
 * fresh typed-array view costs a few nanoseconds; in the QuickJS interpreter the
 * view alone costs about 2,000 instructions, more than the whole WebSocket
 * receive path of a small message. These two functions do the same reading
 * without allocating, so that the checks cost QuickJS what they cost the other
 * runtimes. They are not part of the WebSocket under test
 * (quickjs-websocket/) and see only the message the client delivered.
 *
 *   seq(data, size)        the sequence number at the start of a binary echo
 *                          (little-endian, the first 4 bytes, or 2 or 1 byte for
 *                          messages under 4 bytes; 0 for an empty one) as an
 *                          int32, or undefined when `data` is not an
 *                          ArrayBuffer of exactly `size` bytes
 *   diff(a, b, from)       the first offset >= from at which ArrayBuffers a and
 *                          b differ (the shorter one's length when one is a
 *                          prefix of the other), or -1 when they are equal
 *   count(on)              under valgrind --tool=callgrind --instr-atstart=no
 *                          (wsbench gate): switch instrumentation on (true) or
 *                          off (false), so that only the measured phase is
 *                          counted; natively a no-op of a few instructions.
 *                          Built with -DWSBENCH_QEMU_MARK (make QEMU_MARK=1:
 *                          the armhf build, scripts/setup-arm.sh), it also
 *                          marks the phase for the QEMU plugin that counts
 *                          under qemu-arm (scripts/qemu-count/count.c):
 *                          getpid(2) with the magic pair COUNT_MARK_A,
 *                          COUNT_MARK_B and 1 (on) or 0 (off), arguments
 *                          getpid ignores.
 */
#include <quickjs.h>

#include <stdint.h>
#include <string.h>
#ifdef WSBENCH_QEMU_MARK
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

/* The QEMU plugin's marker (scripts/qemu-count/count.c has the same two). */
#define COUNT_MARK_A 0x77736263u /* "wsbc" */
#define COUNT_MARK_B 0x6f756e74u /* "ount" */

static JSValue js_seq(JSContext *ctx, JSValueConst this_val, int argc,
		      JSValueConst *argv)
{
	size_t len;
	uint8_t *p;
	int64_t want;
	uint32_t v = 0;

	(void)this_val;
	(void)argc;
	if (!JS_IsObject(argv[0]) || JS_ToInt64(ctx, &want, argv[1]))
		return JS_UNDEFINED;
	p = JS_GetArrayBuffer(ctx, &len, argv[0]);
	if (!p) {
		JS_FreeValue(ctx, JS_GetException(ctx)); /* not an ArrayBuffer */
		return JS_UNDEFINED;
	}
	if ((int64_t)len != want)
		return JS_UNDEFINED;
	if (len >= 4)
		memcpy(&v, p, 4); /* little-endian hosts only, like the workload */
	else if (len >= 2)
		v = (uint32_t)p[0] | (uint32_t)p[1] << 8;
	else if (len == 1)
		v = p[0];
	return JS_NewInt32(ctx, (int32_t)v);
}

static JSValue js_diff(JSContext *ctx, JSValueConst this_val, int argc,
		       JSValueConst *argv)
{
	size_t la, lb, n, i;
	uint8_t *a, *b;
	int64_t from;

	(void)this_val;
	(void)argc;
	a = JS_GetArrayBuffer(ctx, &la, argv[0]);
	if (!a)
		return JS_EXCEPTION;
	b = JS_GetArrayBuffer(ctx, &lb, argv[1]);
	if (!b)
		return JS_EXCEPTION;
	if (JS_ToInt64(ctx, &from, argv[2]))
		return JS_EXCEPTION;
	n = la < lb ? la : lb;
	if (from < 0)
		from = 0;
	if ((size_t)from < n && memcmp(a + from, b + from, n - (size_t)from)) {
		for (i = (size_t)from; a[i] == b[i]; i++)
			;
		return JS_NewInt64(ctx, (int64_t)i);
	}
	if (la != lb)
		return JS_NewInt64(ctx, (int64_t)n);
	return JS_NewInt32(ctx, -1);
}

static JSValue js_count(JSContext *ctx, JSValueConst this_val, int argc,
			JSValueConst *argv)
{
	int on = argc > 0 && JS_ToBool(ctx, argv[0]) > 0;

	(void)this_val;
#ifdef HAVE_CALLGRIND
	if (on)
		CALLGRIND_START_INSTRUMENTATION;
	else
		CALLGRIND_STOP_INSTRUMENTATION;
#else
	(void)on;
#endif
#ifdef WSBENCH_QEMU_MARK
	syscall(SYS_getpid, (long)COUNT_MARK_A, (long)COUNT_MARK_B, (long)on);
#endif
	return JS_NewBool(ctx, on);
}

static const JSCFunctionListEntry check_funcs[] = {
	JS_CFUNC_DEF("seq", 2, js_seq),
	JS_CFUNC_DEF("diff", 3, js_diff),
	JS_CFUNC_DEF("count", 1, js_count),
};

static int check_init(JSContext *ctx, JSModuleDef *m)
{
	return JS_SetModuleExportList(ctx, m, check_funcs,
				      sizeof(check_funcs) / sizeof(check_funcs[0]));
}

JSModuleDef *js_init_module(JSContext *ctx, const char *module_name);

JSModuleDef *js_init_module(JSContext *ctx, const char *module_name)
{
	JSModuleDef *m = JS_NewCModule(ctx, module_name, check_init);

	if (!m)
		return NULL;
	JS_AddModuleExportList(ctx, m, check_funcs,
			       sizeof(check_funcs) / sizeof(check_funcs[0]));
	return m;
}
