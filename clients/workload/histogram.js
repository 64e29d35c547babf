// Log-linear (HDR-style) latency histogram in plain ECMAScript (see README.md).
//
// Values are microseconds as floats. They are counted in units of 1/32 µs; below 256
// units (8 µs) every unit has its own bucket, above that every power-of-two range
// [2^m, 2^(m+1)) is split into 128 equal buckets, so a bucket is at most 1/128 of its
// lower bound wide and its midpoint is within 0.4 % of any value in it. Values beyond
// 2^31 units (about 67 s) share the last bucket; min, max and mean are exact.

const SCALE = 32; // units per microsecond
const SUB_BITS = 7; // 128 buckets per power of two
const SUB = 1 << SUB_BITS;
const MAX_UNITS = 0x7fffffff;
const BUCKETS = (31 - SUB_BITS + 1) * SUB; // covers every index up to MAX_UNITS

function indexOf(units) {
  if (units < 2 * SUB) return units;
  const shift = 31 - Math.clz32(units) - SUB_BITS; // >= 1
  return shift * SUB + (units >>> shift);
}

// [lower, width] of bucket `idx`, in units.
function bucketOf(idx) {
  if (idx < 2 * SUB) return [idx, 1];
  const shift = ((idx / SUB) | 0) - 1;
  const width = Math.pow(2, shift);
  return [(idx - shift * SUB) * width, width];
}

export function Histogram() {
  this.counts = new Float64Array(BUCKETS);
  this.count = 0;
  this.sum = 0;
  this.min = Infinity;
  this.max = -Infinity;
}

Histogram.prototype.record = function (us) {
  this.count++;
  this.sum += us;
  if (us < this.min) this.min = us;
  if (us > this.max) this.max = us;
  let units = Math.floor(us * SCALE);
  if (!(units >= 0)) units = 0; // also NaN
  else if (units > MAX_UNITS) units = MAX_UNITS;
  this.counts[indexOf(units)]++;
};

// The value at quantile q (0 < q <= 1): the midpoint of the bucket holding the
// ceil(q * count)-th smallest value, clamped to [min, max]. The ceiling is taken as the
// load generator takes it (histogram.c), so that both clients' percentiles have one
// definition, the harness's too (harness/wsbench/histogram.py).
Histogram.prototype.quantile = function (q) {
  if (this.count === 0) return 0;
  let rank = Math.floor(q * this.count + 0.999999999);
  if (rank < 1) rank = 1;
  if (rank > this.count) rank = this.count;
  let seen = 0;
  const counts = this.counts;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i];
    if (seen >= rank) {
      const b = bucketOf(i);
      const v = (b[0] + b[1] / 2) / SCALE;
      return v < this.min ? this.min : v > this.max ? this.max : v;
    }
  }
  return this.max;
};

// The histogram itself, sparse, in the load generator's format (clients/README.md,
// "Latency histograms"): the same bucket layout over units of 1/32 µs (31.25 ns)
// instead of 1 ns; a bucket is the interval [lo, lo + width) of floored units
// ("integer_values": false), so its midpoint is lo + width / 2. min, max and sum are
// exact, in units (µs * 32: a power of two, so exact too).
Histogram.prototype.sparse = function () {
  const buckets = [];
  const counts = this.counts;
  for (let i = 0; i < counts.length; i++) if (counts[i] !== 0) buckets.push([i, counts[i]]);
  const empty = this.count === 0;
  return {
    unit_ns: 1000 / SCALE,
    sub_bits: SUB_BITS,
    integer_values: false,
    count: this.count,
    min: empty ? 0 : this.min * SCALE,
    max: empty ? 0 : this.max * SCALE,
    sum: this.sum * SCALE,
    buckets,
  };
};

function round3(x) {
  return Math.round(x * 1000) / 1000;
}

// {"count", "min", "mean", "p50", "p90", "p99", "p999", "max"} in microseconds.
Histogram.prototype.summary = function () {
  // An empty histogram has no percentiles: null, never a measured 0.
  if (this.count === 0) return { count: 0, min: null, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
  return {
    count: this.count,
    min: round3(this.min),
    mean: round3(this.sum / this.count),
    p50: round3(this.quantile(0.5)),
    p90: round3(this.quantile(0.9)),
    p99: round3(this.quantile(0.99)),
    p999: round3(this.quantile(0.999)),
    max: round3(this.max),
  };
};
