import type { ReasoningSwitch } from '@hopline/reasoning';
import { REASONING_SWITCHES } from '@hopline/reasoning';
import type { GroupSummary } from './metrics/summary.js';
import { table } from './table.js';

/** The multi-hop figures an ablation compares. */
export interface AblatedFigures {
  chainRecall: number;
  supportRecall: number;
  em: number;
  f1: number;
  /**
   * Yes/no judgements answered right, and answerable questions answered: a rule that decides a
   * judgement or an abstention can change these and leave F1 as it was.
   */
  yesNoRight: number;
  answered: number;
  /** Only with --unanswerable. */
  abstentionRecall?: number;
  abstentionPrecision?: number;
}

export interface SwitchDelta {
  description: string;
  /** Figures with the switch off minus figures with everything on, in points, per group and overall. */
  byGroup: Record<string, AblatedFigures>;
  overall: AblatedFigures;
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export function ablatedFigures(group: GroupSummary): AblatedFigures | undefined {
  const loop = group.systems['multi-hop'];
  if (!loop) return undefined;
  const abstention = group.abstention?.['multi-hop'];
  return {
    chainRecall: loop.chainRecall,
    supportRecall: loop.supportRecall,
    em: loop.answers?.em ?? 0,
    f1: loop.answers?.f1 ?? 0,
    yesNoRight: loop.answers?.judgements.right ?? 0,
    answered: loop.answers?.answered ?? 0,
    ...(abstention ? { abstentionRecall: abstention.recall, abstentionPrecision: abstention.precision } : {}),
  };
}

function minus(off: AblatedFigures, on: AblatedFigures): AblatedFigures {
  return {
    chainRecall: round1(off.chainRecall - on.chainRecall),
    supportRecall: round1(off.supportRecall - on.supportRecall),
    em: round1(off.em - on.em),
    f1: round1(off.f1 - on.f1),
    yesNoRight: round1(off.yesNoRight - on.yesNoRight),
    answered: round1(off.answered - on.answered),
    ...(off.abstentionRecall !== undefined && on.abstentionRecall !== undefined
      ? { abstentionRecall: round1(off.abstentionRecall - on.abstentionRecall) }
      : {}),
    ...(off.abstentionPrecision !== undefined && on.abstentionPrecision !== undefined
      ? { abstentionPrecision: round1(off.abstentionPrecision - on.abstentionPrecision) }
      : {}),
  };
}

type Summary = { overall: GroupSummary; byGroup: Record<string, GroupSummary> };

/** What switching one rule or mechanism off changed, against the run with everything on. */
export function switchDelta(name: ReasoningSwitch, allOn: Summary, off: Summary): SwitchDelta {
  const delta = (on: GroupSummary | undefined, without: GroupSummary | undefined) => {
    const before = on && ablatedFigures(on);
    const after = without && ablatedFigures(without);
    return before && after ? minus(after, before) : undefined;
  };
  const byGroup: Record<string, AblatedFigures> = {};
  for (const [group, summary] of Object.entries(allOn.byGroup)) {
    const change = delta(summary, off.byGroup[group]);
    if (change) byGroup[group] = change;
  }
  return {
    description: REASONING_SWITCHES[name],
    byGroup,
    overall: delta(allOn.overall, off.overall) ?? {
      chainRecall: 0,
      supportRecall: 0,
      em: 0,
      f1: 0,
      yesNoRight: 0,
      answered: 0,
    },
  };
}

const signed = (value: number) => (value > 0 ? `+${value.toFixed(1)}` : value.toFixed(1));

/** One table per figure: a row per switch, a column per group, each cell the change in points. */
export function formatAblation(ablation: Record<string, SwitchDelta>, k: number, overallName: string): string[] {
  const entries = Object.entries(ablation);
  const first = entries[0]?.[1];
  if (!first) return [];
  const groups = Object.keys(first.byGroup);
  const figures: Array<[keyof AblatedFigures, string]> = [
    ['chainRecall', `chain@${k}`],
    ['supportRecall', `supp@${k}`],
    ['f1', 'F1'],
    ['yesNoRight', 'yes/no right'],
    ['answered', 'answered'],
    ...(first.overall.abstentionRecall !== undefined
      ? ([
          ['abstentionRecall', 'abstention recall'],
          ['abstentionPrecision', 'abstention precision'],
        ] as Array<[keyof AblatedFigures, string]>)
      : []),
  ];
  const lines = ['', 'ablation: multi-hop with one switch off, change against all on (points)'];
  for (const [figure, label] of figures) {
    const rows = entries.map(([name, delta]) => [
      name,
      ...groups.map((group) => {
        const value = delta.byGroup[group]?.[figure];
        return value === undefined ? '' : signed(value);
      }),
      signed(delta.overall[figure] ?? 0),
    ]);
    lines.push(...table([`${label}`, ...groups, overallName], rows));
  }
  lines.push(...entries.map(([name, delta]) => `  ${name}: ${delta.description}`));
  return lines;
}
