// `pnpm test:faults [scenario ...]`: the fault suite. Starts its own nats-server and the five
// services as separate processes, runs each scenario (all by default) with 20 questions, prints
// what it measured, and, when every scenario ran, writes docs/reliability.md from the figures.
// The three-node cluster runs last, with a fleet of its own.
import { fileURLToPath } from 'node:url';
import { startFleet } from './fleet.js';
import { clusterNodeLoss } from './nats-cluster.js';
import { currentLoad, writeReliabilityReport, type ReportRow } from './report.js';
import { baseline, SCENARIOS, settle, type ScenarioResult } from './scenarios.js';

const QUESTIONS = 20;
const reportPath = fileURLToPath(new URL('../../docs/reliability.md', import.meta.url));

const wanted = process.argv.slice(2);
const unknown = wanted.filter((id) => id !== clusterNodeLoss.id && !SCENARIOS.some((scenario) => scenario.id === id));
if (unknown.length > 0) {
  const ids = [...SCENARIOS.map((s) => s.id), clusterNodeLoss.id];
  console.error(`unknown scenario ${unknown.join(', ')}; the scenarios: ${ids.join(', ')}`);
  process.exit(2);
}
const selected = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((scenario) => wanted.includes(scenario.id));

const startedAt = new Date();
const loadAtStart = currentLoad();
const rows: ReportRow[] = [];
// Naming only the cluster scenario runs it alone: it brings a fleet of its own.
const onlyCluster = wanted.length > 0 && selected.length === 0;
const fleet = onlyCluster ? undefined : await startFleet();
if (fleet) {
  try {
    const healthy = await baseline.run(fleet, { questions: QUESTIONS });
    rows.push({ scenario: baseline, result: healthy });
    console.log(`${healthy.holds ? 'PASS' : 'FAIL'} ${baseline.id}: ${healthy.measured}`);
    console.log(healthy.tally?.reasons);
    for (const scenario of selected) {
      await settle(fleet);
      const result: ScenarioResult = await scenario
        .run(fleet, { questions: QUESTIONS, ...(healthy.tally ? { baseline: healthy.tally } : {}) })
        .catch((error: unknown) => ({ measured: `did not finish: ${(error as Error).message}`, holds: false }));
      rows.push({ scenario, result });
      console.log(`${result.holds ? 'PASS' : 'FAIL'} ${scenario.id}: ${result.measured}`);
      if (result.tally) console.log(result.tally.reasons);
    }
  } catch (error) {
    console.error(fleet.output());
    throw error;
  } finally {
    await fleet[Symbol.asyncDispose]();
  }
}
if (wanted.length === 0 || wanted.includes(clusterNodeLoss.id)) {
  const result: ScenarioResult = await clusterNodeLoss
    .runAlone({ questions: QUESTIONS })
    .catch((error: unknown) => ({ measured: `did not finish: ${(error as Error).message}`, holds: false }));
  rows.push({ scenario: clusterNodeLoss, result });
  console.log(`${result.holds ? 'PASS' : 'FAIL'} ${clusterNodeLoss.id}: ${result.measured}`);
  if (result.tally) console.log(result.tally.reasons);
}

if (wanted.length === 0) {
  writeReliabilityReport(reportPath, { rows, startedAt, questions: QUESTIONS, loadAtStart });
  console.log('wrote docs/reliability.md');
}
process.exitCode = rows.every((row) => row.result.holds) ? 0 : 1;
