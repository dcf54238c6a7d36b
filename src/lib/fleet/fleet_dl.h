/* SPDX-License-Identifier: MIT */
/* fleet_dl.h - the fleet's client libraries, libnats (NATS JetStream) and
 * libpq (PostgreSQL), loaded when a fleet feature first connects (base/dl.h):
 * with OpenSSL, Kerberos and LDAP under them they cost an agent that never
 * joins a fleet about 3.5 MB resident. Fleet code calls them through
 * nats_fn.X() and pq_fn.X(), typed from nats.h and libpq-fe.h; a function
 * new to the fleet goes into its X-list here.
 */
#ifndef KSHIELD_FLEET_DL_H
#define KSHIELD_FLEET_DL_H

#include <postgresql/libpq-fe.h>
#include <nats/nats.h>
#include "dl.h"

#define KS_NATS_FNS(X) X(js_AddConsumer) X(js_AddStream) X(js_CreateKeyValue) \
	X(js_DeleteConsumer) X(js_GetConsumerInfo) X(js_GetStreamInfo) X(js_KeyValue) \
	X(js_PublishAsyncGetPendingList) X(js_PublishMsgAsync) X(jsConsumerConfig_Init) \
	X(jsConsumerInfo_Destroy) X(jsCtx_Destroy) X(jsMsgMetaData_Destroy) X(jsOptions_Init) \
	X(jsPubOptions_Init) X(jsStreamConfig_Init) X(jsStreamInfo_Destroy) X(kvConfig_Init) \
	X(kvEntry_Destroy) X(kvEntry_Key) X(kvEntry_Operation) X(kvEntry_Revision) X(kvEntry_Value) \
	X(kvEntry_ValueLen) X(kvEntry_ValueString) X(kvStore_Destroy) X(kvStore_Get) X(kvStore_Put) \
	X(kvStore_PutString) X(kvStore_UpdateString) X(kvStore_Watch) X(kvStore_WatchAll) \
	X(kvWatcher_Destroy) X(kvWatcher_Next) X(kvWatchOptions_Init) X(nats_GetLastError) \
	X(nats_Sleep) X(natsConnection_Close) X(natsConnection_Connect) X(natsConnection_Destroy) \
	X(natsConnection_GetLastError) X(natsConnection_GetMaxPayload) X(natsConnection_JetStream) \
	X(natsConnection_Publish) X(natsConnection_PublishRequest) X(natsConnection_SubscribeSync) \
	X(natsInbox_Create) X(natsInbox_Destroy) X(natsMsg_Create) X(natsMsg_Destroy) \
	X(natsMsg_GetData) X(natsMsg_GetDataLength) X(natsMsg_GetMetaData) X(natsMsg_GetReply) \
	X(natsMsg_GetSubject) X(natsMsgHeader_Get) X(natsMsgHeader_Set) X(natsMsgList_Destroy) \
	X(natsOptions_Create) X(natsOptions_Destroy) X(natsOptions_LoadCATrustedCertificates) \
	X(natsOptions_LoadCertificatesChain) X(natsOptions_SetClosedCB) \
	X(natsOptions_SetDisconnectedCB) X(natsOptions_SetErrorHandler) \
	X(natsOptions_SetMaxReconnect) X(natsOptions_SetReconnectBufSize) \
	X(natsOptions_SetReconnectedCB) X(natsOptions_SetReconnectWait) \
	X(natsOptions_SetRetryOnFailedConnect) X(natsOptions_SetSecure) X(natsOptions_SetServers) \
	X(natsOptions_SetTimeout) X(natsOptions_SetUserCredentialsFromFiles) X(natsStatus_GetText) \
	X(natsSubscription_Destroy) X(natsSubscription_NextMsg)
#define KS_PQ_FNS(X) X(PQclear) X(PQcmdTuples) X(PQconnectdb) X(PQerrorMessage) X(PQexec) \
	X(PQexecParams) X(PQfinish) X(PQgetResult) X(PQgetvalue) X(PQntuples) X(PQputCopyData) \
	X(PQputCopyEnd) X(PQresultErrorField) X(PQresultErrorMessage) X(PQresultStatus) \
	X(PQsetNoticeProcessor) X(PQstatus)

extern struct ks_nats_fns { KS_NATS_FNS(KS_DL_PTR) } nats_fn;
extern struct ks_pq_fns { KS_PQ_FNS(KS_DL_PTR) } pq_fn;

/* Load libnats / libpq (once; every later call is cheap). Before the first
 * nats_fn / pq_fn call of any path: ks_nats_open() and the PostgreSQL
 * connects do it. 0, or -ENOPKG with "... apt-get install ..." recorded. */
int ks_fleet_nats_load(void);
int ks_fleet_pq_load(void);

#endif /* KSHIELD_FLEET_DL_H */
