// The python-light data snippet and its input, shared by the bench and its floor probe.

export const DATA_PY = ['import json', 'data = json.loads(raw)', "active = [d for d in data if d['status'] == 'active' and d['score'] > 50]", "result = {'count': len(active), 'top': [d['id'] for d in active[:3]]}"].join('\n');

/** 14,000 records as JSON text (about 1.3 MB). */
export function records(): string {
  const list = Array.from({ length: 14_000 }, (_, i) => ({ id: i, status: i % 3 === 0 ? 'active' : 'inactive', score: i % 100, name: `user-${i}`, email: `user-${i}@example.com` }));
  return JSON.stringify(list);
}
