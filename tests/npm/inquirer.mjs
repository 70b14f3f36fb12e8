// Ask a select and a checkbox with @inquirer/prompts; write the answers as JSON to argv[2].
import { writeFileSync } from "node:fs";
import { select, checkbox } from "@inquirer/prompts";

const framework = await select({
  message: "Which framework should the app use?",
  choices: [{ value: "React" }, { value: "Vue" }, { value: "Svelte" }, { value: "Solid" }],
});
const features = await checkbox({
  message: "Which features should be enabled?",
  choices: [{ value: "TypeScript" }, { value: "ESLint" }, { value: "Prettier" }, { value: "Vitest" }],
});
writeFileSync(process.argv[2], JSON.stringify({ framework, features }));
