// Module format: see headers.
