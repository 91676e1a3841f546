//! The server's module API, as Goblin calls it: one table of every function used. The table
//! is the only way in: `api!(RedisModule_X)` does not compile unless `RedisModule_X` is in it,
//! and an entry nothing calls is dead code, which `make lint` refuses. So the list that
//! `RedisModule_OnLoad` checks before registering anything is exactly what the commands call.

use redis_module::raw;

/// Builds the table: `required` functions must all be present, or the module refuses to load;
/// `optional` ones are absent on some servers and every caller has a way without them.
macro_rules! api_table {
    (required: [$($required:ident),* $(,)?], optional: [$($optional:ident),* $(,)?] $(,)?) => {
        /// One marker per function in the table, named after it: `api!` refers to it.
        #[allow(non_upper_case_globals)]
        pub(crate) mod listed {
            $(pub(crate) const $required: () = ();)*
            $(pub(crate) const $optional: () = ();)*
        }

        /// The required functions this server lacks.
        pub(super) fn missing_required() -> Vec<&'static str> {
            let mut missing = Vec::new();
            // SAFETY: reads of pointers written once by `RedisModule_Init`, before any call.
            unsafe {
                $(
                    let function = raw::$required;
                    if function.is_none() {
                        missing.push(stringify!($required));
                    }
                )*
            }
            missing
        }
    };
}

api_table! {
    required: [
        // Registration and the module's life.
        RedisModule_CreateCommand,
        RedisModule_SetModuleOptions,
        RedisModule_RegisterInfoFunc,
        RedisModule_InfoAddSection,
        RedisModule_InfoAddFieldULongLong,
        RedisModule_Log,
        // Key positions, for a command whose key flags depend on the call (Redis 7.0+, Valkey).
        RedisModule_IsKeysPositionRequest,
        RedisModule_KeyAtPosWithFlags,
        // Arguments.
        RedisModule_StringPtrLen,
        RedisModule_StringToLongLong,
        RedisModule_StringToDouble,
        // Keys.
        RedisModule_OpenKey,
        RedisModule_CloseKey,
        RedisModule_KeyType,
        RedisModule_ValueLength,
        RedisModule_UnlinkKey,
        RedisModule_DeleteKey,
        RedisModule_SetAbsExpire,
        RedisModule_GetExpire,
        RedisModule_GetAbsExpire,
        RedisModule_SetExpire,
        // Strings.
        RedisModule_StringDMA,
        RedisModule_StringTruncate,
        // Sorted sets.
        RedisModule_ZsetAdd,
        RedisModule_ZsetRem,
        RedisModule_ZsetScore,
        RedisModule_ZsetFirstInScoreRange,
        RedisModule_ZsetLastInScoreRange,
        RedisModule_ZsetRangeCurrentElement,
        RedisModule_ZsetRangeNext,
        RedisModule_ZsetRangePrev,
        RedisModule_ZsetRangeEndReached,
        RedisModule_ZsetRangeStop,
        RedisModule_CreateString,
        RedisModule_FreeString,
        // Questions to the server outside commands: which commands it has (at load), its
        // settings (at load and on a change), and in a cluster whether a key is still served
        // here before a grant made on a timer or after another client's write.
        RedisModule_Call,
        RedisModule_FreeCallReply,
        // Effects.
        RedisModule_Replicate,
        RedisModule_NotifyKeyspaceEvent,
        RedisModule_SignalModifiedKey,
        RedisModule_Milliseconds,
        // Waiting: blocked clients, timers, keyspace events (Redis 7.0+, Valkey).
        RedisModule_BlockClientOnKeys,
        RedisModule_SetDisconnectCallback,
        RedisModule_GetBlockedClientPrivateData,
        RedisModule_UnblockClient,
        RedisModule_GetContextFlags,
        RedisModule_AvoidReplicaTraffic,
        RedisModule_GetSelectedDb,
        RedisModule_GetClientId,
        RedisModule_SelectDb,
        RedisModule_CreateTimer,
        RedisModule_StopTimer,
        RedisModule_SubscribeToKeyspaceEvents,
        // Replies.
        RedisModule_ReplyWithLongLong,
        RedisModule_ReplyWithSimpleString,
        RedisModule_ReplyWithError,
        RedisModule_ReplyWithStringBuffer,
        RedisModule_ReplyWithNull,
        RedisModule_ReplyWithArray,
    ],
    optional: [
        // Redis 7.2+ and Valkey; Redis 7.0 reads the wall clock instead.
        RedisModule_CachedMicroseconds,
        // Docs and ACL categories: without them the commands still work.
        RedisModule_GetCommand,
        RedisModule_SetCommandInfo,
        RedisModule_SetCommandACLCategories,
        // Reading a reply's elements and the server's INFO (a setting, which server this is);
        // without them Goblin assumes the defaults.
        RedisModule_CallReplyType,
        RedisModule_CallReplyArrayElement,
        RedisModule_GetServerInfo,
        RedisModule_ServerInfoGetFieldC,
        RedisModule_FreeServerInfo,
        RedisModule_CallReplyStringPtr,
        // Config changes (lazyfree-lazy-expire), flushed and swapped dbs: Redis 7.0+ and Valkey.
        RedisModule_SubscribeToServerEvent,
        // Redis 7.2+ and Valkey: jobs deferred to the end of the command, expiry or eviction
        // under way. Redis 7.0 uses timers.
        RedisModule_AddPostNotificationJob,
        // Redis 7.2+ and Valkey: which module options the server knows (Valkey's own are
        // declared only where it lists them).
        RedisModule_GetModuleOptionsAll,
    ],
}

/// A required function of the server's API. `RedisModule_OnLoad` refuses to load the module
/// unless every one of them is present, so a command never finds one missing.
macro_rules! api {
    ($name:ident) => {{
        let () = $crate::server::api::listed::$name;
        // SAFETY: the pointers are written once by `RedisModule_Init`, before any command
        // runs, and only read afterwards, on the server's main thread.
        #[allow(unused_unsafe)]
        let function = unsafe { redis_module::raw::$name };
        match function {
            Some(function) => function,
            None => panic!(concat!(stringify!($name), " is missing")),
        }
    }};
}

/// An optional function of the server's API: `None` on servers that lack it.
macro_rules! optional_api {
    ($name:ident) => {{
        let () = $crate::server::api::listed::$name;
        // SAFETY: as for `api!`.
        #[allow(unused_unsafe)]
        let function = unsafe { redis_module::raw::$name };
        function
    }};
}

pub(crate) use {api, optional_api};
