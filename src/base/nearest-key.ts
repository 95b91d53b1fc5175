/**
 * The candidate closest to `word` by edit distance (Damerau: a swap of two neighbours counts as one), or
 * undefined when nothing is close enough to be a plausible typo — a wrong suggestion is worse than none.
 */
export function nearestKey(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

export function editDistance(a: string, b: string): number {
  // Rows of the classic dynamic-programming table; three are enough for transpositions.
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (prevPrev[j - 2] ?? 0) + 1);
      row.push(d);
    }
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}
