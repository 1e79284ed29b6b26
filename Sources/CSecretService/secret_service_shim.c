#include "secret_service_shim.h"

#include <libsecret/secret.h>
#include <stdlib.h>
#include <string.h>

// Attribute names any Secret Service client can search for; the schema name is not matched
// (SECRET_SCHEMA_DONT_MATCH_NAME), so an item stored by another tool with these attributes
// is found too.
static const SecretSchema sotto_schema = {
    "org.sotto.MasterKey", SECRET_SCHEMA_DONT_MATCH_NAME,
    {
        {"application", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {"group", SECRET_SCHEMA_ATTRIBUTE_STRING},
        {NULL, 0},
    }};

// Cancels `cancellable` when the deadline passes before `finish` is called.
typedef struct {
    GCancellable *cancellable;
    GMutex mutex;
    GCond cond;
    gboolean done;
    gint64 deadline;
    GThread *thread;
} Deadline;

static gpointer deadline_thread(gpointer data) {
    Deadline *d = data;
    g_mutex_lock(&d->mutex);
    while (!d->done) {
        if (!g_cond_wait_until(&d->cond, &d->mutex, d->deadline)) {
            g_cancellable_cancel(d->cancellable);
            break;
        }
    }
    g_mutex_unlock(&d->mutex);
    return NULL;
}

static void deadline_start(Deadline *d, int timeout_ms) {
    d->cancellable = g_cancellable_new();
    g_mutex_init(&d->mutex);
    g_cond_init(&d->cond);
    d->done = FALSE;
    d->deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    d->thread = g_thread_new("sotto-secret-deadline", deadline_thread, d);
}

static void deadline_finish(Deadline *d) {
    g_mutex_lock(&d->mutex);
    d->done = TRUE;
    g_cond_signal(&d->cond);
    g_mutex_unlock(&d->mutex);
    g_thread_join(d->thread);
    g_object_unref(d->cancellable);
    g_mutex_clear(&d->mutex);
    g_cond_clear(&d->cond);
}

static GHashTable *attributes_for(const char *group) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer) "application", (gpointer) "sotto");
    g_hash_table_insert(attributes, (gpointer) "group", (gpointer)group);
    return attributes;
}

static int failure(GError *err, Deadline *d, char **error, const char *what) {
    int code = SOTTO_SECRET_FAILED;
    const char *reason = err ? err->message : "unknown error";
    if (err && g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        code = SOTTO_SECRET_UNREACHABLE;
        reason = "no answer before the deadline";
    } else if (err && (err->domain == G_DBUS_ERROR || err->domain == G_IO_ERROR)) {
        code = SOTTO_SECRET_UNREACHABLE;
    } else if (err && g_error_matches(err, SECRET_ERROR, SECRET_ERROR_IS_LOCKED)) {
        code = SOTTO_SECRET_LOCKED;
    }
    (void)d;
    if (error) *error = g_strdup_printf("%s: %s", what, reason);
    if (err) g_error_free(err);
    return code;
}

static SecretService *open_service(Deadline *d, GError **err) {
    // A new connection each time (not the cached one): a keyring daemon that restarted
    // since the last call is found again.
    return secret_service_open_sync(SECRET_TYPE_SERVICE, NULL, SECRET_SERVICE_OPEN_SESSION, d->cancellable, err);
}

// Whether the service has a collection behind the "default" alias, where libsecret stores
// (SECRET_COLLECTION_DEFAULT): 1 yes, 0 no (no alias, or one naming none of the service's
// collections), -1 no answer before the deadline (`*err` set). One round trip (ReadAlias on
// the service's proxy; its Collections property is already cached), so a short deadline is
// not spent on it. Any other error counts as yes, so a service that answers the alias
// question oddly keeps the store's own answer.
static int has_default_collection(SecretService *service, Deadline *d, GError **err) {
    GError *local = NULL;
    GVariant *reply = g_dbus_proxy_call_sync(G_DBUS_PROXY(service), "ReadAlias", g_variant_new("(s)", "default"),
                                             G_DBUS_CALL_FLAGS_NONE, -1, d->cancellable, &local);
    if (!reply) {
        if (g_error_matches(local, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
            g_propagate_error(err, local);
            return -1;
        }
        g_error_free(local);
        return 1;
    }
    const gchar *path = NULL;
    g_variant_get(reply, "(&o)", &path);
    int has = g_strcmp0(path, "/") != 0;
    GVariant *collections = has ? g_dbus_proxy_get_cached_property(G_DBUS_PROXY(service), "Collections") : NULL;
    if (collections) {
        // An alias left naming a collection that was deleted is no default collection either.
        has = 0;
        GVariantIter iter;
        const gchar *each = NULL;
        g_variant_iter_init(&iter, collections);
        while (!has && g_variant_iter_next(&iter, "&o", &each)) has = g_strcmp0(each, path) == 0;
        g_variant_unref(collections);
    }
    g_variant_unref(reply);
    return has;
}

static int no_default_collection(char **error) {
    if (error) *error = g_strdup("the Secret Service has no default collection");
    return SOTTO_SECRET_NO_DEFAULT_COLLECTION;
}

int sotto_secret_lookup(const char *group, int timeout_ms, unsigned char **secret, size_t *length, char **error) {
    *secret = NULL;
    *length = 0;
    if (error) *error = NULL;
    Deadline d;
    deadline_start(&d, timeout_ms);
    GError *err = NULL;
    SecretService *service = open_service(&d, &err);
    if (!service) {
        int code = failure(err, &d, error, "cannot reach the Secret Service");
        deadline_finish(&d);
        return code;
    }
    GHashTable *attributes = attributes_for(group);
    GList *items = secret_service_search_sync(service, &sotto_schema, attributes,
                                              SECRET_SEARCH_ALL | SECRET_SEARCH_LOAD_SECRETS, d.cancellable, &err);
    g_hash_table_unref(attributes);
    int code = SOTTO_SECRET_NOT_FOUND;
    if (err) {
        code = failure(err, &d, error, "Secret Service search failed");
    } else {
        gboolean locked = FALSE;
        for (GList *l = items; l != NULL; l = l->next) {
            SecretItem *item = l->data;
            if (secret_item_get_locked(item)) {
                locked = TRUE;
                continue;
            }
            SecretValue *value = secret_item_get_secret(item);
            if (!value) continue;
            gsize size = 0;
            const gchar *bytes = secret_value_get(value, &size);
            *secret = malloc(size > 0 ? size : 1);
            if (*secret) {
                memcpy(*secret, bytes, size);
                *length = size;
                code = SOTTO_SECRET_FOUND;
            } else {
                code = SOTTO_SECRET_FAILED;
            }
            secret_value_unref(value);
            break;
        }
        if (code == SOTTO_SECRET_NOT_FOUND && locked) {
            code = SOTTO_SECRET_LOCKED;
            if (error) *error = g_strdup("the collection that holds the key is locked");
        }
    }
    if (code == SOTTO_SECRET_NOT_FOUND) {
        // Nothing to read: say now when there is also nowhere to store (a store would fail,
        // or make libsecret prompt for a new keyring nobody sees).
        switch (has_default_collection(service, &d, &err)) {
        case 0: code = no_default_collection(error); break;
        case -1: code = failure(err, &d, error, "Secret Service alias lookup failed"); break;
        default: break;
        }
    }
    g_list_free_full(items, g_object_unref);
    g_object_unref(service);
    deadline_finish(&d);
    return code;
}

int sotto_secret_store(const char *group, const char *label, const char *secret, int timeout_ms, char **error) {
    if (error) *error = NULL;
    Deadline d;
    deadline_start(&d, timeout_ms);
    GError *err = NULL;
    SecretService *service = open_service(&d, &err);
    if (!service) {
        int code = failure(err, &d, error, "cannot reach the Secret Service");
        deadline_finish(&d);
        return code;
    }
    GHashTable *attributes = attributes_for(group);
    SecretValue *value = secret_value_new(secret, -1, "text/plain");
    gboolean stored = secret_service_store_sync(service, &sotto_schema, attributes, SECRET_COLLECTION_DEFAULT, label,
                                                value, d.cancellable, &err);
    secret_value_unref(value);
    g_hash_table_unref(attributes);
    int code;
    if (stored) {
        code = SOTTO_SECRET_FOUND;
    } else if (!g_error_matches(err, G_IO_ERROR, G_IO_ERROR_CANCELLED) && has_default_collection(service, &d, NULL) == 0) {
        // No default collection (it went between a lookup and this store). GNOME Keyring's
        // error names its missing "login" collection by D-Bus path, which says nothing to a user.
        g_error_free(err);
        code = no_default_collection(error);
    } else {
        code = failure(err, &d, error, "cannot store the key in the Secret Service");
    }
    g_object_unref(service);
    deadline_finish(&d);
    return code;
}

int sotto_secret_clear(const char *group, int timeout_ms, char **error) {
    if (error) *error = NULL;
    Deadline d;
    deadline_start(&d, timeout_ms);
    GError *err = NULL;
    SecretService *service = open_service(&d, &err);
    if (!service) {
        int code = failure(err, &d, error, "cannot reach the Secret Service");
        deadline_finish(&d);
        return code;
    }
    GHashTable *attributes = attributes_for(group);
    gboolean cleared = secret_service_clear_sync(service, &sotto_schema, attributes, d.cancellable, &err);
    g_hash_table_unref(attributes);
    int code = err ? failure(err, &d, error, "cannot delete the key from the Secret Service")
                   : (cleared ? SOTTO_SECRET_FOUND : SOTTO_SECRET_NOT_FOUND);
    g_object_unref(service);
    deadline_finish(&d);
    return code;
}
