/** One sample of a Prometheus text exposition: its series name and labels. */
export interface Sample {
  metric: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format a service's `/metrics` serves (comments skipped). */
export function parseExposition(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = LINE.exec(line);
    if (!match || line.startsWith('#')) return [];
    const [, metric = '', labels = '', value = ''] = match;
    return [
      {
        metric,
        labels: Object.fromEntries([...labels.matchAll(LABEL)].map(([, name = '', text = '']) => [name, text])),
        value: Number(value),
      },
    ];
  });
}
