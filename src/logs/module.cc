// Module logs: see headers.
