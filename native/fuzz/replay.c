// Runs a fuzz target over files, without libFuzzer: the repository's corpus and every crash the
// fuzzer ever found, as a regression test built by any C compiler with ASan and UBSan
// (test/core/supervision/native-fuzz-replay.test.ts). Exit 0 when every input ran; a sanitizer or a CHECK aborts.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    FILE *file = fopen(argv[i], "rb");
    if (!file) {
      perror(argv[i]);
      return 2;
    }
    static uint8_t input[1 << 20];
    size_t size = fread(input, 1, sizeof input, file);
    fclose(file);
    // A copy of exactly its bytes: ASan sees a read past them.
    uint8_t *exact = malloc(size ? size : 1);
    for (size_t j = 0; j < size; j++) exact[j] = input[j];
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    printf("ran %s (%zu bytes)\n", argv[i], size);
  }
  return 0;
}
