"""Runtime modules of the generated package, kept as real source (linted and
type-checked with the generator) and copied into the output with the usual header.
They use relative imports only, so the output stays vendorable under any name."""
