// Number, size and duration formatting for the page's text.

export const nf = new Intl.NumberFormat('en-US');
export function fmt(n) {
  return nf.format(n);
}

export function mb(n) {
  return (n / (1024 * 1024)).toFixed(1);
}

export function bytes(n) {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} B`;
}

export function ms(x) {
  if (x < 1) return `${x.toFixed(2)} ms`;
  if (x < 10) return `${x.toFixed(1)} ms`;
  return `${Math.round(x)} ms`;
}

export function shorten(s, n = 26) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
