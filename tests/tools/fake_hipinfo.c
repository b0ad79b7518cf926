/*
 * fake_hipinfo.c - stands in for a HIP SDK's hipInfo.exe in the Windows
 * detection test: prints the recorded output kept beside it
 * (PROGRAM.txt), as the real tool prints its device list.
 */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	char path[4096], buf[4096];
	FILE *f;
	size_t n;

	if (argc < 1 || strlen(argv[0]) + 5 > sizeof(path))
		return 2;
	snprintf(path, sizeof(path), "%s.txt", argv[0]);
	f = fopen(path, "rb");
	if (!f)
		return 1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}
