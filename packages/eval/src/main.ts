import { runCli } from './cli.js';

runCli(process.argv.slice(2), { print: (text) => console.log(text) }).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
