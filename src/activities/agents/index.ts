/** Named agent definitions read from disk (Node side); the data types live in src/shared/agents. */
export { loadAgentDefinitions, MAX_AGENT_FILE_BYTES } from './load';
export { loadAgentSources } from './sources';
export { PLUGIN_MANIFEST, PluginError, readPluginAgents } from './plugins';
export { AgentDirectoryError, isAgentDirectoryError } from './errors';
export { formatAgentReport, type AgentReport } from './report';
