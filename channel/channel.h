/*
 * channel.h - signed channels, the writing side: keys and signatures,
 * publishing a folder as a channel, and accepting newer indexes into a
 * root.  The format and the reading side are core/channel.h.
 */
#ifndef CFA_CHANNEL_PUBLISH_H
#define CFA_CHANNEL_PUBLISH_H

#include <openssl/evp.h>

#include "core/channel.h"

enum cfapkg_err cfa_key_generate(struct cfapkg_ctx *ctx, const char *private_path,
                                 char pub_b64[CFA_PUBKEY_B64_LEN + 1]);
enum cfapkg_err cfa_key_load_private(struct cfapkg_ctx *ctx, const char *path, EVP_PKEY **out);
bool cfa_key_public(EVP_PKEY *key, unsigned char pub[CFA_PUBKEY_LEN]);
/* "ed25519 BASE64", a bare BASE64, or a file holding either. */
enum cfapkg_err cfa_key_parse_public(struct cfapkg_ctx *ctx, const char *text,
                                     unsigned char pub[CFA_PUBKEY_LEN]);
enum cfapkg_err cfa_sign(struct cfapkg_ctx *ctx, EVP_PKEY *key, const void *data, size_t len,
                         unsigned char sig[CFA_SIG_LEN]);

/* Fetches st's index and accepts it when it is newer (update.c);
 * *current: it was the one already accepted. */
enum cfapkg_err cfa_channel_update_one(struct cfapkg_ctx *ctx, struct cfa_channel_state *st,
                                       const struct cfapkg_fetch_opts *fo, bool *current);

#endif
