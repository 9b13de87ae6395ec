import { buildProgram } from './cliProgram';
import { errorText } from './lib/errorText';

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    console.error(errorText(err));
    process.exitCode = 1;
  });
