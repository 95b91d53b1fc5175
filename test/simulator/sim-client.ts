/** A minimal client of the simulated service for the simulator's tests (the real client lives in src/source/). */

export interface Page {
  status: number;
  data: Record<string, unknown>[] | null;
  next: string;
}

export async function getToken(baseUrl: string, username = 'demo', password = 'demo'): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
  });
  const body: unknown = await res.json();
  if (res.status !== 200 || typeof body !== 'object' || body === null || !('access_token' in body) || typeof body.access_token !== 'string') {
    throw new Error(`token request failed: ${res.status}`);
  }
  return body.access_token;
}

/** GET a report URL (absolute) and parse the envelope. */
export async function getPage(url: string, token: string): Promise<Page> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, data: null, next: '' };
  const body: unknown = JSON.parse(text);
  if (typeof body !== 'object' || body === null || !('data' in body) || !('next' in body) || typeof body.next !== 'string') {
    throw new Error(`not an envelope: ${text.slice(0, 200)}`);
  }
  const data = body.data;
  if (data !== null && !Array.isArray(data)) throw new Error('data is neither null nor an array');
  return { status: res.status, data, next: body.next };
}

export function reportUrl(baseUrl: string, params: Record<string, string | number | (string | number)[]>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const item of Array.isArray(v) ? v : [v]) p.append(k, String(item));
  return `${baseUrl}/reports/v2/transfers?${p.toString()}`;
}

/** Follows `next` (resolved against the page URL, keeping a base path prefix) until it is empty. */
export async function getAll(baseUrl: string, params: Record<string, string | number | (string | number)[]>, token: string): Promise<{ records: Record<string, unknown>[]; pages: number }> {
  const records: Record<string, unknown>[] = [];
  let url = reportUrl(baseUrl, params);
  let pages = 0;
  for (;;) {
    const page = await getPage(url, token);
    pages++;
    if (page.status !== 200) throw new Error(`status ${page.status} on ${url}`);
    records.push(...(page.data ?? []));
    if (page.next === '') return { records, pages };
    if (pages > 10_000) throw new Error('pagination does not end');
    url = new URL(page.next, url).toString();
  }
}
