import type { Transfer } from '../../src/source/transfer.js';

/** A successful reception of `file` from `user` at `time`, as the poller hands it on (flow summary tests). */
export function successfulTransfer(time: number, user: string, file: string): Transfer {
  return {
    id: `${user}-${file}-${time}`, source: 'mft', time, instance: 'PROD01', user, eventCode: 7, event: 'reception', file, code: 0, result: 'success', size: 1, message: '', tags: '',
    record: { DATAHORA: '', INSTANCE: 'PROD01', USUARIO: user, CONEXAO: '', DATAARQUIVO: '', EVENTO: 7, HORAARQUIVO: '', MAXTAMREG: null, NUMREG: null, MENSAGEM: '', NOMEARQUIVO: file, TAGS: '', PROCID: null, REDE: '', RESULTADO: 0, TAMARQUIVO: 1, THREADID: null, TIPOREC: '', DIAS: null },
  };
}
