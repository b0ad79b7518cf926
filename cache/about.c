/*
 * about.c - the versions of the libraries cfapkg runs with, as each one
 * reports itself at run time (a shared library may be newer than the
 * headers the build saw).
 */
#include <archive.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <string.h>

#include "cfapkg.h"
#include "platform/platform.h"

/* Every libcurl call of this file: one place to change if libcurl is
 * ever loaded on demand. */
static const char *curl_version_text(void)
{
	const curl_version_info_data *d = curl_version_info(CURLVERSION_NOW);

	return d && d->version ? d->version : "";
}

/* "libarchive 3.6.2" -> "3.6.2": the name is printed beside it already. */
static const char *without_name(const char *text, const char *name)
{
	size_t n = strlen(name);

	if (!text)
		return "";
	if (strncmp(text, name, n) == 0 && text[n] == ' ')
		return text + n + 1;
	return text;
}

size_t cfapkg_components(struct cfapkg_component *out, size_t max)
{
	const struct cfapkg_component all[] = {
		{"libsolv", cfa_plat_solv_version()},
		{"libcurl", curl_version_text()},
		{"libarchive", without_name(archive_version_string(), "libarchive")},
		{"OpenSSL", without_name(OpenSSL_version(OPENSSL_VERSION), "OpenSSL")},
		{"cJSON", cJSON_Version()},
	};
	size_t i, n = sizeof(all) / sizeof(all[0]);

	for (i = 0; i < n && i < max; i++)
		out[i] = all[i];
	return n;
}
