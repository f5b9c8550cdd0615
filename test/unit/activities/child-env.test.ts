/** The worker's secrets stay out of the children that take its environment whole (child-env.ts). */
import { isSecretName, withoutSecrets } from '../../../src/activities/child-env';

test('provider keys, tokens, passwords, key files and forkflow\'s own keys are taken out; the rest passes', () => {
  const env = {
    PATH: '/usr/bin', HOME: '/home/w', HTTPS_PROXY: 'http://proxy:3128', PIP_INDEX_URL: 'https://pypi.example/simple', TEMPORAL_ADDRESS: 'localhost:7233', SSH_AUTH_SOCK: '/run/ssh',
    ANTHROPIC_API_KEY: 'sk-ant', ANTHROPIC_AUTH_TOKEN: 't', OPENAI_API_KEY: 'sk', GEMINI_API_KEY: 'g', MY_SERVICE_APIKEY: 'k', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 's',
    GITHUB_TOKEN: 'ghp', DB_PASSWORD: 'p', GOOGLE_APPLICATION_CREDENTIALS: '/k.json', FORKFLOW_ENCRYPTION_KEYS: 'k', FORKFLOW_ENCRYPTION_KEY_FILE: '/k', FORKFLOW_CODEC_TOKEN: 't',
    FORKFLOW_WEB_TOKEN: 't', TEMPORAL_API_KEY: 'k', TEMPORAL_TLS_CLIENT_KEY_PATH: '/k.pem', TEMPORAL_TLS_CLIENT_KEY_DATA: 'pem',
  };
  expect(withoutSecrets(env)).toEqual({ PATH: '/usr/bin', HOME: '/home/w', HTTPS_PROXY: 'http://proxy:3128', PIP_INDEX_URL: 'https://pypi.example/simple', TEMPORAL_ADDRESS: 'localhost:7233', SSH_AUTH_SOCK: '/run/ssh' });
  expect(isSecretName('KEYBOARD')).toBe(false);
});
