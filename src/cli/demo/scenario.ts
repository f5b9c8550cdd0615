/**
 * The demo's script: a parent that surveys this repository, then three sibling forks from
 * its snapshot. Offline, the directives carry instructions for the scripted model (see
 * src/offline/README.md); with ANTHROPIC_API_KEY they are plain requests to a real model.
 */

export interface DemoFork {
  label: string;
  prompt: string;
}

export interface DemoScenario {
  parentPrompt: string;
  forks: [DemoFork, DemoFork, DemoFork];
  /** Sent to the second fork once it has taken its first turn. */
  message: string;
  /** The third fork is cancelled once it has taken its first turn. */
}

const lines = (...l: string[]) => l.join('\n');

export function demoScenario(offline: boolean): DemoScenario {
  if (!offline) {
    return {
      parentPrompt: 'Survey this repository: list the folders under src/ and read src/workflows/fork/fork-workflow.ts. Then name three areas that deserve a closer look, in two sentences.',
      forks: [
        { label: 'turn-loop', prompt: "Explain how a fork's turn loop works, from src/workflows/fork/turn-loop.ts and what it calls." },
        { label: 'offline-model', prompt: 'Summarise what the offline Messages API emulator in src/offline emulates, and how its scripted model is driven.' },
        { label: 'tools-audit', prompt: 'Audit src/activities/tools for ways a memory fork could write outside its memory directory. Be thorough.' },
      ],
      message: 'Also check how faults are injected into the emulator, and mention it in your report.',
    };
  }
  return {
    parentPrompt: lines(
      'Survey this repository and pick three areas worth a closer look.',
      '@sleep 400 @tool Glob {"pattern":"src/*/index.ts"}',
      '@sleep 400 @tool Read {"file_path":"src/workflows/fork/fork-workflow.ts"}',
      // Paced like a generating model, so the demo's live stream shows the text arriving.
      '@pace 40 @reply Three areas stand out: the turn loop (src/workflows), the offline model (src/offline) and the tools (src/activities/tools).',
    ),
    forks: [
      {
        label: 'turn-loop',
        prompt: lines(
          "Explain how a fork's turn loop works.",
          '@sleep 700 @tool Read {"file_path":"src/workflows/fork/turn-loop.ts","limit":60}',
          '@sleep 700 @tool Grep {"pattern":"stopConditions","path":"src/workflows","output_mode":"content"}',
          '@sleep 700 @report',
        ),
      },
      {
        label: 'offline-model',
        prompt: lines(
          'Summarise what the offline model emulates.',
          '@sleep 900 @tool Read {"file_path":"src/offline/README.md","limit":40}',
          '@sleep 900 @tool Glob {"pattern":"src/offline/**/*.ts"}',
          '@sleep 900 @report',
        ),
      },
      {
        label: 'tools-audit',
        prompt: lines(
          'Audit the tools for containment gaps.',
          '@sleep 700 @tool Glob {"pattern":"src/activities/tools/*.ts"}',
          '@sleep 60000 @report',
        ),
      },
    ],
    message: lines('Also check how faults are injected.', '@sleep 600 @tool Grep {"pattern":"kind: .drop.","path":"src/offline","output_mode":"files_with_matches"}', '@sleep 600 @report'),
  };
}

export interface TreeScenario {
  rootPrompt: string;
  /** A named agent the root can spawn (subagent_type "reviewer"). */
  reviewer: { name: string; description: string; systemPrompt: string; tools: string[] };
  /** Sent to the reviewer after the root finished: it resumes from its own history. */
  followUp: string;
}

const agentCall = (input: Record<string, unknown>) => ({ name: 'Agent', input });

export function treeScenario(offline: boolean): TreeScenario {
  const reviewer = {
    name: 'reviewer',
    description: 'Reviews code for correctness risks.',
    systemPrompt: 'You review code for correctness risks. Read the files you are pointed at and answer in at most five short bullet points.',
    tools: ['Read', 'Glob', 'Grep'],
  };
  if (!offline) {
    return {
      rootPrompt:
        'Plan a review of this repository. Use the Agent tool twice in one turn: fork yourself (no subagent_type) to map src/workflows, ' +
        'and start the "reviewer" agent (subagent_type "reviewer", name "reviewer") on src/activities/tools. Wait for both reports, then summarise them in three sentences.',
      reviewer,
      followUp: 'One more question: which single change would you make first, and why?',
    };
  }
  const fork = agentCall({ description: 'map workflows', prompt: lines('Map src/workflows.', '@sleep 800 @tool Glob {"pattern":"src/workflows/**/*.ts"}', '@sleep 600 @report') });
  const review = agentCall({
    description: 'review tools',
    subagent_type: 'reviewer',
    name: 'reviewer',
    prompt: lines('Review src/activities/tools.', '@sleep 900 @tool Read {"file_path":"src/activities/tools/contained-write.ts","limit":40}', '@sleep 600 @reply - writes go through directory descriptors\\n- hard links are refused'),
  });
  return {
    rootPrompt: lines(
      'Plan a review of this repository.',
      '@sleep 400 @tool Glob {"pattern":"src/*/index.ts"}',
      `@sleep 400 @tools ${JSON.stringify([fork, review])}`,
      '@sleep 300 @reply Waiting for the fork and the reviewer.',
      '@sleep 300 @reply One report is in.',
      '@sleep 300 @reply Both reports are in: the workflows are mapped and the tools contain their writes.',
    ),
    reviewer,
    followUp: lines('Which change would you make first?', '@sleep 500 @reply Add a test for renamed parents.'),
  };
}
