/** Every test file, in one process against one live service (`npm test`). */
import "./types.test.js";
import "./client.test.js";
import "./operations.test.js";
import "./agent.test.js";
import "./hosts.test.js";
// Last: it checks what the files above called.
import "./coverage.test.js";
