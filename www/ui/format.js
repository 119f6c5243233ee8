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

/** A time left, rounded as a person says it: "under a minute", "about 4 minutes", "about 1 h 20 min". */
export function timeLeft(msLeft) {
  const minutes = Math.round(msLeft / 60000);
  if (msLeft < 45000) return 'under a minute';
  if (minutes < 60) return `about ${Math.max(1, minutes)} minute${minutes === 1 ? '' : 's'}`;
  return `about ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function shorten(s, n = 26) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
